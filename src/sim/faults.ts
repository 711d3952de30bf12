// Request-level fault rules (fail the next N matching requests, add latency). Schemas are
// valibot so the HTTP control endpoint and the TypeScript API accept exactly the same shapes.
import * as v from "valibot";
import type { RequestInfo } from "./request-info.ts";
import { injected, type StatusError } from "./status.ts";

const VERBS = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"] as const;

/** Matches requests: omitted fields match anything; `resource` is the plural (`pods`, `jobs`). */
const Match = {
  verb: v.optional(v.picklist(VERBS)),
  resource: v.optional(v.string()),
  subresource: v.optional(v.string()),
  namespace: v.optional(v.string()),
};

export const FailRuleSchema = v.object({
  ...Match,
  code: v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599)),
  count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 1),
  message: v.optional(v.string()),
});
export type FailRule = v.InferInput<typeof FailRuleSchema>;

/**
 * The next `count` matching requests are served, and then their answer is lost: the connection
 * is cut before it is written, as when a client's deadline passes or the network drops while
 * the apiserver answers. The client cannot tell whether the request took effect.
 */
export const LostAnswerRuleSchema = v.object({
  ...Match,
  count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 1),
});
export type LostAnswerRule = v.InferInput<typeof LostAnswerRuleSchema>;

export const LatencyRuleSchema = v.object({
  ...Match,
  ms: v.pipe(v.number(), v.integer(), v.minValue(0)),
});
export type LatencyRule = v.InferInput<typeof LatencyRuleSchema>;

/** Watches of `resource` (or of all) get each change `ms` after it happened (0 ends the lag). */
export const LagWatchesRuleSchema = v.object({
  resource: v.optional(v.string()),
  ms: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600_000)),
});
export type LagWatchesRule = v.InferInput<typeof LagWatchesRuleSchema>;

type MatchFields = { verb?: string | undefined; resource?: string | undefined; subresource?: string | undefined; namespace?: string | undefined };

function matches(rule: MatchFields, info: RequestInfo): boolean {
  if (rule.verb !== undefined && rule.verb !== info.verb) return false;
  if (rule.resource !== undefined && rule.resource !== info.type.plural) return false;
  if (rule.subresource !== undefined && rule.subresource !== (info.subresource ?? "")) return false;
  if (rule.namespace !== undefined && rule.namespace !== info.namespace) return false;
  return true;
}

/** A failure rule or a lost-answer rule, in the one list their order is kept in. */
type FailureRule = (({ kind: "fail" } & v.InferOutput<typeof FailRuleSchema>) | ({ kind: "lose" } & v.InferOutput<typeof LostAnswerRuleSchema>)) & { remaining: number };

export class RequestFaults {
  private failures: FailureRule[] = [];
  private latencies: v.InferOutput<typeof LatencyRuleSchema>[] = [];

  failNext(rule: FailRule): void {
    const r = v.parse(FailRuleSchema, rule);
    this.failures.push({ kind: "fail", ...r, remaining: r.count });
  }

  loseAnswers(rule: LostAnswerRule): void {
    const r = v.parse(LostAnswerRuleSchema, rule);
    this.failures.push({ kind: "lose", ...r, remaining: r.count });
  }

  addLatency(rule: LatencyRule): void {
    this.latencies.push(v.parse(LatencyRuleSchema, rule));
  }

  clear(): void {
    this.failures = [];
    this.latencies = [];
  }

  /** Total delay the matching latency rules add to this request. */
  latencyFor(info: RequestInfo): number {
    return this.latencies.filter((l) => matches(l, info)).reduce((n, l) => n + l.ms, 0);
  }

  /**
   * Consumes the first matching rule, if any: the error to answer with, or "lose" for a request
   * to serve and then cut off before its answer.
   */
  takeFailure(info: RequestInfo): StatusError | "lose" | undefined {
    const i = this.failures.findIndex((f) => matches(f, info));
    if (i < 0) return undefined;
    const f = this.failures[i]!;
    if (--f.remaining === 0) this.failures.splice(i, 1);
    if (f.kind === "lose") return "lose";
    return injected(f.code, f.message ?? `injected fault: ${info.verb} ${info.type.plural}${info.subresource ? `/${info.subresource}` : ""} answered ${f.code}`);
  }
}
