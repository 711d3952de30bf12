/**
 * RUNNER_APPS: the operator's catalog of predefined apps (contract.md §8.1). A malformed
 * catalog refuses startup — apps are never silently dropped.
 */
import * as v from "valibot";
import { PullPolicySchema, type PullPolicy } from "../contract/wire.ts";
import { ConfigError } from "./env-values.ts";

export type CatalogEntry = {
  name: string;
  image: string;
  env: Record<string, string>;
  pullPolicy: PullPolicy;
  port?: number;
  title?: string;
  description?: string;
};

/** Ordered by declaration; a Map so that names like `__proto__` are ordinary keys. */
export type AppsCatalog = ReadonlyMap<string, CatalogEntry>;

const fieldRules = [
  ["image", v.pipe(v.string(), v.minLength(1)), "needs a non-empty string 'image'."],
  ["env", v.optional(v.record(v.string(), v.string())), "has an invalid 'env' — expected an object of string values."],
  ["pullPolicy", v.optional(PullPolicySchema), "has an invalid 'pullPolicy' — expected one of missing, always, never."],
  ["port", v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535))), "has an invalid 'port' — expected an integer in 1..65535."],
  ["title", v.optional(v.string()), "has an invalid 'title' — expected a string."],
  ["description", v.optional(v.string()), "has an invalid 'description' — expected a string."],
] as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function parseAppsCatalog(raw: string | undefined): AppsCatalog {
  const catalog = new Map<string, CatalogEntry>();
  if (raw === undefined || raw.trim() === "") return catalog;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError(`RUNNER_APPS is not valid JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(parsed)) {
    throw new ConfigError("RUNNER_APPS must be a JSON object mapping app names to entries.");
  }
  for (const [name, entry] of Object.entries(parsed)) {
    if (name.trim() === "") throw new ConfigError("RUNNER_APPS has an entry with an empty name.");
    if (!isPlainObject(entry)) throw new ConfigError(`RUNNER_APPS entry '${name}' must be an object.`);
    for (const [field, schema, complaint] of fieldRules) {
      if (!v.is(schema, entry[field])) throw new ConfigError(`RUNNER_APPS entry '${name}' ${complaint}`);
    }
    catalog.set(name, {
      name,
      image: entry.image as string,
      env: { ...(entry.env as Record<string, string> | undefined) },
      pullPolicy: (entry.pullPolicy as PullPolicy | undefined) ?? "missing",
      ...(entry.port !== undefined && { port: entry.port as number }),
      ...(entry.title !== undefined && { title: entry.title as string }),
      ...(entry.description !== undefined && { description: entry.description as string }),
    });
  }
  return catalog;
}

/** Catalog names usable as a co-resident agent: those that declare a port (contract.md §8.2). */
export function coResidentAgentNames(catalog: AppsCatalog): string[] {
  return [...catalog.values()].filter((entry) => entry.port !== undefined).map((entry) => entry.name);
}
