/** The warm pool's decisions (src/kube/pool/plan.ts): which sessions it serves, what it does now. */
import { loadKubeConfig } from "../../../src/config/kube.ts";
import { describe, expect, it } from "vitest";
import type { V1Pod } from "@kubernetes/client-node";
import { coldReason, makerStanding, planPool, type PoolPodView } from "../../../src/kube/pool/plan.ts";
import { LABEL } from "../../../src/kube/specs/names.ts";
import type { StartSpec } from "../../../src/sessions/backend-seam.ts";

function spec(overrides: Partial<StartSpec> = {}): StartSpec {
  return {
    sessionId: "k7m3qx4r2abc",
    createdAt: "2026-12-01T10:00:00.000Z",
    mode: "run",
    apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
    env: { GREETING: "hi" },
    config: { image: "telorun/node:latest-slim", pullPolicy: "missing" },
    bundle: { entryRelativePath: "telo.yaml", files: [] },
    inspect: true,
    selfContained: false,
    ...overrides,
  };
}

const SERVE = { defaultImage: "telorun/node:latest-slim", building: false };
const APP = { name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" as const };
const TELO = { ...SERVE, teloImages: loadKubeConfig({ RUNNER_SELF_URL: "http://runner" }).kernelImages };

describe("coldReason", () => {
  it("serves a run session of the default image, inspected or not, with any config it ignores", () => {
    expect(coldReason(spec(), SERVE)).toBeUndefined();
    expect(coldReason(spec({ config: { image: "telorun/node:latest-slim", pullPolicy: "missing", registryUrl: "https://r.example" } }), SERVE)).toBeUndefined();
  });

  // A Service targets a port by number: a pod reaches it whether or not its spec lists it.
  // Whatever else the session is: a pool pod's spec cannot gain the Secret reference.
  it("starts a session with a workload token cold", () => {
    const token = { env: "T", value: "a".repeat(32), holder: "app" as const };
    expect(coldReason(spec({ token }), SERVE)).toBe("a session with a workload token reads it from a Secret its pod names");
    expect(coldReason(spec({ token, selfContained: true }), SERVE)).toBe("a session with a workload token reads it from a Secret its pod names");
  });

  it("serves a session with declared ports", () => {
    expect(coldReason(spec({ apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [{ port: 80, protocol: "tcp" }, { port: 53, protocol: "udp" }], io: "tty" }] }), SERVE)).toBeUndefined();
  });

  it("serves a session whose version's image is the pool's, pulled as the pool pulls", () => {
    expect(coldReason(spec({ apps: [{ ...APP, telo: "0.96.0" }], config: {} }), { ...TELO, defaultImage: "telorun/node:0.96.0-slim" })).toBeUndefined();
  });

  it.each([
    ["watch", spec({ mode: "watch" }), SERVE, /watch/],
    ["predefined app", spec({ selfContained: true }), SERVE, /predefined app/],
    ["another image", spec({ config: { image: "telorun/node:0.14.0", pullPolicy: "missing" } }), SERVE, /telorun\/node:0.14.0 is not the pool's/],
    ["pull always", spec({ config: { image: "telorun/node:latest-slim", pullPolicy: "always" } }), SERVE, /pull policy 'always'/],
    ["pull never", spec({ config: { image: "telorun/node:latest-slim", pullPolicy: "never" } }), SERVE, /pull policy 'never'/],
    ["an env name sh cannot export", spec({ env: { "my.key": "v" } }), SERVE, /'my\.key'/],
    ["the build path", spec(), { ...SERVE, building: true }, /built/],
    ["a telo version", spec({ apps: [{ ...APP, telo: "0.96.0" }], config: {} }), TELO, /telo 0\.96\.0 runs telorun\/node:0\.96\.0-slim, not the pool's image \(telorun\/node:latest-slim\)/],
    ["a version pulled always", spec({ apps: [{ ...APP, telo: "0.96.0" }], config: {} }), { ...TELO, defaultImage: "telorun/node:0.96.0-slim", teloImages: { ...TELO.teloImages, teloPullPolicy: "always" as const } }, /pull policy 'always'/],
  ])("starts cold: %s", (_label, session, input, reason) => {
    expect(coldReason(session, input)).toMatch(reason);
  });
});

const view = (name: string, createdAt: number, overrides: Partial<PoolPodView> = {}): PoolPodView => ({ name, createdAt, deleting: false, ended: false, running: true, polled: true, ...overrides });

describe("planPool", () => {
  const base = { size: 3, maxIdleMs: 60_000, now: 100_000, creating: 0, claimed: new Set<string>() };

  it("offers ready pods oldest first and creates what is missing", () => {
    const plan = planPool([view("b", 90_000), view("a", 80_000), view("c", 95_000, { polled: false })], base);
    expect(plan).toEqual({ remove: [], create: 0, claimable: ["a", "b"], live: 3, nextExpiry: 140_000 });
    expect(planPool([view("a", 80_000)], { ...base, creating: 1 }).create).toBe(1);
  });

  it("removes ended pods and idle ones past their age; claimed and deleting pods are no longer the pool's", () => {
    const plan = planPool(
      [view("old", 40_000), view("failed", 90_000, { ended: true, running: false }), view("taken", 90_000), view("going", 90_000, { deleting: true }), view("fresh", 99_000, { running: false })],
      { ...base, claimed: new Set(["taken"]) },
    );
    expect(plan).toEqual({ remove: ["old", "failed"], create: 2, claimable: [], live: 1, nextExpiry: 159_000 });
  });

  it("does nothing with the pool off and no pods", () => {
    expect(planPool([], { ...base, size: 0 })).toEqual({ remove: [], create: 0, claimable: [], live: 0, nextExpiry: undefined });
  });
});

describe("planPool among replicas", () => {
  const base = { size: 2, maxIdleMs: 60_000, now: 100_000, creating: 0, claimed: new Set<string>() };

  it("replaces an orphaned pod (its maker gone): removed, never claimable, and counted missing", () => {
    const plan = planPool([view("theirs", 80_000), view("orphan", 70_000, { orphaned: true })], base);
    expect(plan).toEqual({ remove: ["orphan"], create: 1, claimable: ["theirs"], live: 1, nextExpiry: 140_000 });
  });
});

describe("makerStanding", () => {
  const pod = (maker?: string): V1Pod => ({ metadata: { name: "telo-pool-1", labels: { [LABEL.pool]: "true", ...(maker !== undefined && { [LABEL.poolMaker]: maker }) } } });
  const live = new Set(["replica-a", "replica-b"]);

  it("tells this replica's pods, a live peer's and a gone maker's apart", () => {
    expect(makerStanding(pod("replica-a"), "replica-a", live)).toBe("mine");
    expect(makerStanding(pod("replica-b"), "replica-a", live)).toBe("peer");
    expect(makerStanding(pod("replica-c"), "replica-a", live)).toBe("gone");
  });

  it("counts a pod with no maker (made by a single runner before) as gone: no replica holds its token", () => {
    expect(makerStanding(pod(), "replica-a", live)).toBe("gone");
  });

  it("counts this replica's own pod as its own even before its first member list", () => {
    expect(makerStanding(pod("replica-a"), "replica-a", new Set())).toBe("mine");
  });
});
