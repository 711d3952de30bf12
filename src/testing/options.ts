/**
 * What a test suite may ask of `startTestRunner`. It comes from another project's code, so it is
 * checked here (valibot) and a mistake is one clear error at the call, not a runner that starts
 * on the wrong cluster.
 */
import * as v from "valibot";

const Milliseconds = v.pipe(v.number(), v.integer(), v.minValue(1));

export const TestRunnerOptionsSchema = v.strictObject({
  /**
   * A kubeconfig file: the runner uses that cluster instead of the embedded simulated one.
   * Nothing else of the calling environment reaches the runner; what the cluster's credential
   * plugin needs goes in `env`.
   */
  kubeconfig: v.optional(v.pipe(v.string(), v.minLength(1, "kubeconfig must be a file path"))),
  /** Runner variables (docs/operating.md), e.g. `RUNNER_MAX_SESSIONS`; they win over the defaults. */
  env: v.optional(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "env names are shell variable names")), v.string()), {}),
  /** How long the runner may take to serve `/v1/ready` (default 60 s, for loaded CI machines). */
  startTimeoutMs: v.optional(Milliseconds, 60_000),
  /** How long `stop()` waits for a graceful exit before it kills every process of the runner. */
  stopTimeoutMs: v.optional(Milliseconds, 10_000),
});

export type TestRunnerOptions = v.InferInput<typeof TestRunnerOptionsSchema>;
export type ResolvedTestRunnerOptions = v.InferOutput<typeof TestRunnerOptionsSchema>;

/** The options, or a TypeError naming every problem. */
export function resolveTestRunnerOptions(input: unknown): ResolvedTestRunnerOptions {
  const parsed = v.safeParse(TestRunnerOptionsSchema, input ?? {});
  if (parsed.success) return parsed.output;
  const problems = parsed.issues.map((issue) => `${v.getDotPath(issue) ?? "options"}: ${issue.message}`);
  throw new TypeError(`startTestRunner: ${problems.join("; ")}`);
}
