/**
 * The chaos run's plan, a pure function of its seed (so a failing run is replayed with
 * CHAOS_SEED=<seed>): what each session does and which fault follows each session's creation.
 */
import type { FailRule } from "../../src/sim/index.ts";

type Verb = NonNullable<FailRule["verb"]>;

export type SessionPlan = { simulate: Record<string, string | number>; stopAfterMs: number | undefined; exitCode: number | undefined };

export type Fault =
  | { kind: "fail"; verb: Verb; resource: string; subresource?: string; code: number; count: number }
  | { kind: "latency"; verb: Verb; resource: string; subresource?: string; ms: number }
  | { kind: "clear" }
  | { kind: "dropWatches" }
  | { kind: "expire" }
  | { kind: "cutAttach" }
  | { kind: "deletePod" }
  | { kind: "killSupervisor" }
  | { kind: "restartApi" }
  | { kind: "none" };

export type Step = { session: SessionPlan; fault: Fault };

/** mulberry32: small, fast, good enough to pick faults; the same seed gives the same run. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VERBS: [Verb, string, string?][] = [
  ["create", "pods"],
  ["get", "pods"],
  ["list", "pods"],
  ["watch", "pods"],
  ["delete", "pods"],
  ["get", "pods", "log"],
  ["get", "pods", "attach"],
  ["create", "pods", "attach"],
];

/** How big a run is: its sessions, and how many times the supervisor is SIGKILLed (the api is restarted once). */
export type PlanSize = { sessions: number; supervisorKills: 1 | 2 };

/** Where in the run each kill may fall (start and width, as fractions of the sessions). */
const KILL_WINDOWS = [
  [0.2, 0.2],
  [0.6, 0.2],
] as const;

export function chaosPlan(seed: number, { sessions, supervisorKills }: PlanSize): Step[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  // The supervisor is SIGKILLed and the api restarted once, at seeded points of the run.
  const kills = new Set(KILL_WINDOWS.slice(0, supervisorKills).map(([start, width]) => Math.floor(sessions * (start + next() * width))));
  const apiRestart = Math.floor(sessions * (0.4 + next() * 0.15));
  return Array.from({ length: sessions }, (_, index): Step => {
    const selfExit = next() < 0.5;
    const exitCode = selfExit ? pick([0, 0, 3]) : undefined;
    const session: SessionPlan = {
      simulate: selfExit ? { "run-ms": 100 + Math.floor(next() * 1500), "exit-code": exitCode!, output: `session ${index}\n` } : { output: `session ${index}\n` },
      stopAfterMs: selfExit ? undefined : 50 + Math.floor(next() * 1500),
      exitCode,
    };
    if (kills.has(index)) return { session, fault: { kind: "killSupervisor" } };
    if (index === apiRestart) return { session, fault: { kind: "restartApi" } };
    const roll = next();
    const [verb, resource, subresource] = pick(VERBS);
    const target = { verb, resource, ...(subresource && { subresource }) };
    const fault: Fault =
      roll < 0.15
        ? { kind: "fail", ...target, code: pick([500, 503, 429]), count: 1 + Math.floor(next() * 2) }
        : roll < 0.3
          ? { kind: "latency", ...target, ms: 50 + Math.floor(next() * 400) }
          : roll < 0.38
            ? { kind: "clear" }
            : roll < 0.46
              ? { kind: "dropWatches" }
              : roll < 0.52
                ? { kind: "expire" }
                : roll < 0.6
                  ? { kind: "cutAttach" }
                  : roll < 0.68
                    ? { kind: "deletePod" }
                    : { kind: "none" };
    return { session, fault };
  });
}
