/**
 * RUNNER_APPS: the operator's catalog of predefined apps (docs/api.md "Apps door"). A malformed
 * catalog refuses startup — apps are never silently dropped.
 */
import * as v from "valibot";
import { PullPolicySchema } from "../contract/wire.ts";
import { ConfigError } from "./env-values.ts";

const complaint = {
  image: "needs a non-empty string 'image'.",
  env: "has an invalid 'env' — expected an object of string values.",
  pullPolicy: "has an invalid 'pullPolicy' — expected one of missing, always, never.",
  port: "has an invalid 'port' — expected an integer in 1..65535.",
  title: "has an invalid 'title' — expected a string.",
  description: "has an invalid 'description' — expected a string.",
  tokenEnv: "has an invalid 'tokenEnv' — expected an environment variable name (letters, digits, '_', '-', '.', not starting with a digit).",
};

/**
 * One catalog entry as the operator writes it. Each field's issue carries the complaint the
 * startup error names, and fields are checked in this order, so the first issue is the one
 * reported.
 */
const CatalogFieldsSchema = v.object({
  image: v.pipe(v.string(complaint.image), v.minLength(1, complaint.image)),
  env: v.optional(v.record(v.string(), v.string(complaint.env), complaint.env), {}),
  pullPolicy: v.optional(v.picklist(PullPolicySchema.options, complaint.pullPolicy), "missing"),
  port: v.optional(
    v.pipe(v.number(complaint.port), v.integer(complaint.port), v.minValue(1, complaint.port), v.maxValue(65535, complaint.port)),
  ),
  title: v.optional(v.string(complaint.title)),
  description: v.optional(v.string(complaint.description)),
  /** The env variable a per-session workload token is delivered in (docs/events-and-tokens.md). */
  tokenEnv: v.optional(v.pipe(v.string(complaint.tokenEnv), v.regex(/^[-._a-zA-Z][-._a-zA-Z0-9]*$/, complaint.tokenEnv))),
  // The object's own issue is a missing required key, and only `image` is required.
}, complaint.image);

/** A resolved catalog entry: its name, and every default filled. */
export const CatalogEntrySchema = v.object({ name: v.string(), ...CatalogFieldsSchema.entries });
export type CatalogEntry = v.InferOutput<typeof CatalogEntrySchema>;

/** Ordered by declaration; a Map so that names like `__proto__` are ordinary keys. */
export type AppsCatalog = ReadonlyMap<string, CatalogEntry>;

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
    const fields = v.safeParse(CatalogFieldsSchema, entry, { abortEarly: true });
    if (!fields.success) throw new ConfigError(`RUNNER_APPS entry '${name}' ${fields.issues[0].message}`);
    catalog.set(name, { name, ...fields.output });
  }
  return catalog;
}

/** Catalog names usable as a co-resident agent: those that declare a port (docs/api.md "Agents"). */
export function coResidentAgentNames(catalog: AppsCatalog): string[] {
  return [...catalog.values()].filter((entry) => entry.port !== undefined).map((entry) => entry.name);
}
