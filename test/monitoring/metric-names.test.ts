/**
 * Neither the dashboard nor the alerts may drift from the code: every metric name a dashboard
 * query (panels and variables) or an alert expression reads must be in the runner's GET /metrics.
 * The runner here is one replica on Leases (so the replica figures exist) with the warm pool on,
 * on the simulated cluster, driven until each event-counted series has moved once: a launch, a
 * failed one, an eviction, terminal bytes both ways, a refused Kubernetes request, a pod watch restart.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../deploy/render.ts";
import { echoes, type KubeRunner, startKubeRunner } from "../support/kube-runner.ts";
import { freePort } from "../support/ports.ts";
import { scrape, type Sample, valueOf } from "../support/metrics.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";
import { type Dashboard, dashboardQueries, type RuleGroups } from "./render.ts";

/**
 * Families that only show a series once an event happened that this run cannot make: their
 * exposition must still declare them (HELP and TYPE), with the reason here.
 */
const DECLARED_ONLY: Record<string, string> = {
  runner_image_build_seconds: "an image build needs the build path and a registry",
};

const PROMQL_WORDS = new Set(["and", "or", "unless", "bool", "offset"]);

/** The metric names a PromQL expression reads (Grafana's label_values(metric, label) included). */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/label_values\(([^,]+),\s*\w+\)/g, "$1")
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)].map((m) => m[1]!).filter((name) => !PROMQL_WORDS.has(name));
  return [...new Set(names)];
}

function read(path: string): string {
  return readFileSync(join(REPO_ROOT, path), "utf8");
}

const board = JSON.parse(read("k8s/components/monitoring/dashboard.json")) as Dashboard;
const rules = (parse(read("k8s/components/monitoring/prometheusrule.yaml")) as { spec: RuleGroups }).spec;
const used = new Map<string, string[]>();
for (const [where, exprs] of [
  ["dashboard", dashboardQueries(board)],
  ["alerts", rules.groups.flatMap((group) => group.rules.map((rule) => rule.expr))],
] as const) {
  for (const name of exprs.flatMap(metricNames)) used.set(name, [...(used.get(name) ?? []), where]);
}

describe("metric names in PromQL", () => {
  it("are read from selectors, ranges, groupings and variable queries, leaving functions, labels and strings out", () => {
    expect(metricNames('sum by (pod, le) (rate(runner_a_bucket{job="$job", x=~"a|b"}[$__rate_interval])) / on (pod) max(runner_b) > 0.9 and runner_c == 0')).toEqual(["runner_a_bucket", "runner_b", "runner_c"]);
    expect(metricNames('label_values(runner_supervisor_up{namespace="$namespace"}, job)')).toEqual(["runner_supervisor_up"]);
  });
});

describe("the dashboard and the alerts against /metrics", () => {
  let runner: KubeRunner;
  let samples: Sample[];
  let exposition: string;

  beforeAll(async () => {
    runner = await startKubeRunner({
      env: {
        RUNNER_REPLICA_ID: "replica-names",
        RUNNER_PEER_LISTEN: `127.0.0.1:${await freePort()}`,
        RUNNER_SHARDS: "2",
        RUNNER_LEASE_DURATION_SECONDS: "3",
        RUNNER_WARM_POOL_SIZE: "1",
        // One place, so each session evicts the one before (ended).
        RUNNER_MAX_SESSIONS: "1",
        // A pull that fails fails its start this soon.
        RUNNER_START_DEADLINE_SECONDS: "2",
      },
    });
    const create = (config: Record<string, unknown> = {}) =>
      waitFor("a session admitted once the replica holds its shards", () => runner.client.createSession(sessionBody(config)).catch(() => undefined));
    // Pulled always, so it starts cold (the warm pool's pods pull when missing) and its pull fails.
    const failing = await create({ pullPolicy: "always", simulate: { "image-pull": "fail" } });
    await eventsUntil(runner.client, failing.sessionId, isStatus("failed"));
    const first = await create({ simulate: { output: "hello\n", "run-ms": 100 } });
    await eventsUntil(runner.client, first.sessionId, isStatus("exited"));
    const second = await create();
    await eventsUntil(runner.client, second.sessionId, isStatus("running"));
    await echoes(runner, second.sessionId, "relayed both ways");
    runner.sim.faults.failNext({ verb: "list", resource: "leases", code: 500 });
    runner.sim.faults.dropWatches("pods");
    samples = await waitFor("an error counted and the watch restarted", async () => {
      const scraped = await scrape(runner.baseUrl);
      return valueOf(scraped, "runner_kube_request_errors_total") > 0 && valueOf(scraped, "runner_pod_watch_restarts_total") > 0 ? scraped : undefined;
    });
    exposition = await (await fetch(`${runner.baseUrl}/metrics`)).text();
  }, 120_000);
  afterAll(() => runner?.close());

  it("reads the names it checks", () => {
    expect([...used.keys()]).toEqual(expect.arrayContaining(["runner_session_starts_total", "runner_lease_held", "nodejs_eventloop_lag_p99_seconds"]));
    expect(new Set(used.get("runner_supervisor_up"))).toEqual(new Set(["dashboard", "alerts"]));
  });

  it("carries the supervisor's configured ceilings and its Leases, as the alerts read them", () => {
    const supervisor = { process: "supervisor" };
    expect(valueOf(samples, "runner_max_sessions", supervisor)).toBe(1);
    expect(valueOf(samples, "runner_warm_pool_size", supervisor)).toBe(1);
    expect(valueOf(samples, "runner_lease_held", { ...supervisor, lease: "member" })).toBe(1);
    expect(valueOf(samples, "runner_shards", { ...supervisor, view: "served" })).toBe(2);
  });

  it("finds a series of every metric they read, or the declared family of one this run cannot move", () => {
    const served = new Set(samples.map((sample) => sample.name));
    const missing = [...used].filter(([name]) => {
      if (served.has(name)) return false;
      const family = Object.keys(DECLARED_ONLY).find((declared) => name.startsWith(declared));
      return family === undefined || !new RegExp(`^# TYPE ${family} `, "m").test(exposition);
    });
    expect(missing.map(([name, where]) => `${name} (${where.join(", ")})`)).toEqual([]);
  });
});
