/**
 * Valibot building blocks for environment variables. Every config module describes the
 * variables it reads as one `v.object` keyed by variable name, built from these, so the set
 * of variables a process reads is `Object.keys(schema.entries)` (the deployment test relies
 * on that) and every refusal message is worded the same way.
 *
 * Conventions (docs/operating.md "Configuration", "Core variables"): values are trimmed and an empty string
 * counts as unset, except PORT, which is parsed raw.
 */
import * as v from "valibot";

/** Thrown for any configuration refusal; the process prints `message` alone and exits 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

// The default is a function (returning undefined) rather than absent so that valibot's
// object schema still runs the pipe for a variable that is not set at all.
const rawEnvValue = v.optional(v.string(), () => undefined);

/** Trimmed string; unset or blank → `fallback`. */
export function stringVar<const D extends string | undefined>(fallback: D) {
  return v.pipe(
    rawEnvValue,
    v.transform((raw): string | D => {
      const trimmed = raw?.trim() ?? "";
      return trimmed === "" ? fallback : trimmed;
    }),
  );
}

/** Positive integer; unset or blank → `fallback`. */
export function positiveIntVar<const D extends number | undefined>(name: string, fallback: D) {
  return v.pipe(
    rawEnvValue,
    v.rawTransform(({ dataset, addIssue, NEVER }): number | D => {
      const trimmed = dataset.value?.trim() ?? "";
      if (trimmed === "") return fallback;
      if (!/^\d+$/.test(trimmed) || Number(trimmed) < 1 || !Number.isSafeInteger(Number(trimmed))) {
        addIssue({ message: `${name} must be a positive integer, got '${dataset.value}'.` });
        return NEVER;
      }
      return Number(trimmed);
    }),
  );
}

const TRUE_WORDS = new Set(["true", "1", "yes"]);
const FALSE_WORDS = new Set(["false", "0", "no"]);

/** Boolean from true/1/yes or false/0/no, case-insensitive; unset or blank → `fallback`. */
export function booleanVar(name: string, fallback: boolean) {
  return v.pipe(
    rawEnvValue,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const word = dataset.value?.trim().toLowerCase() ?? "";
      if (word === "") return fallback;
      if (TRUE_WORDS.has(word)) return true;
      if (FALSE_WORDS.has(word)) return false;
      addIssue({ message: `${name} must be a boolean (true/false), got '${dataset.value}'.` });
      return NEVER;
    }),
  );
}

/** TCP port parsed raw (PORT="" is refused, not defaulted); unset → `fallback`. */
export function portVar(name: string, fallback: number) {
  return v.pipe(
    rawEnvValue,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const raw = dataset.value;
      if (raw === undefined) return fallback;
      const port = /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (!(port >= 1 && port <= 65535)) {
        addIssue({ message: `${name} must be an integer in 1..65535, got '${raw}'.` });
        return NEVER;
      }
      return port;
    }),
  );
}

/**
 * Parses `env` with an object schema of variables; the first refusal becomes a ConfigError
 * whose message is the variable's own sentence.
 */
export function parseEnv<S extends v.ObjectSchema<v.ObjectEntries, undefined>>(
  schema: S,
  env: NodeJS.ProcessEnv,
): v.InferOutput<S> {
  const result = v.safeParse(schema, env, { abortEarly: true });
  if (!result.success) throw new ConfigError(result.issues[0].message);
  return result.output;
}

/** Regular expression source; unset or blank → undefined; an invalid pattern is refused. */
export function regexVar(name: string) {
  return v.pipe(
    rawEnvValue,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const trimmed = dataset.value?.trim() ?? "";
      if (trimmed === "") return undefined;
      try {
        return new RegExp(trimmed);
      } catch (error) {
        addIssue({ message: `${name} is not a valid regular expression: ${(error as Error).message}` });
        return NEVER;
      }
    }),
  );
}

/** One of `choices`, case-insensitive; unset or blank → `fallback`. */
export function picklistVar<const C extends readonly string[]>(name: string, choices: C, fallback: C[number]) {
  return v.pipe(
    rawEnvValue,
    v.rawTransform(({ dataset, addIssue, NEVER }): C[number] => {
      const word = dataset.value?.trim().toLowerCase() ?? "";
      if (word === "") return fallback;
      const choice = choices.find((candidate) => candidate === word);
      if (choice !== undefined) return choice;
      addIssue({ message: `${name} must be one of ${choices.join(", ")}, got '${dataset.value}'.` });
      return NEVER;
    }),
  );
}
