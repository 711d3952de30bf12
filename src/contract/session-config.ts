/**
 * A session's `config` (docs/telo-versions.md): an opaque JSON object of which the runner knows
 * two keys. It is parsed once, at admission, into this typed form; everything downstream (the
 * pod builders, the warm pool, the session record) reads the parsed value.
 */
import * as v from "valibot";
import { PullPolicySchema } from "./wire.ts";

/** The keys a version supersedes: Studio withholds them from `config` when it names one. */
export const SUPERSEDED_BY_TELO = ["image", "pullPolicy"] as const;

/**
 * Known keys checked, unknown keys kept (a backend may read its own, as the simulated cluster
 * reads `simulate`). `registryUrl` is no longer a key the contract defines: any value passes.
 */
export const SessionConfigSchema = v.looseObject({
  image: v.optional(v.pipe(v.string(), v.minLength(1)), undefined),
  pullPolicy: v.optional(PullPolicySchema, undefined),
});
export type SessionConfig = v.InferOutput<typeof SessionConfigSchema>;

const KEY_RULES: Record<(typeof SUPERSEDED_BY_TELO)[number], string> = {
  image: "`config.image` must be a non-empty string when given",
  pullPolicy: "`config.pullPolicy` must be one of missing, always, never when given",
};

/** The config gate's shape check: the parsed config, or the refusal naming the offending key. */
export function parseSessionConfig(input: Record<string, unknown>): { config: SessionConfig } | { refusal: string } {
  const result = v.safeParse(SessionConfigSchema, input);
  if (result.success) return { config: result.output };
  const key = String(result.issues[0].path?.[0]?.key ?? "");
  return { refusal: KEY_RULES[key as keyof typeof KEY_RULES] ?? `\`config.${key}\` is invalid` };
}
