import { describe, expect, it } from "vitest";
import { parseAppsCatalog } from "../../src/config/apps-catalog.ts";
import { type AdmissionContext, planAppSession, planSession, resolveApps, workloadEnv } from "../../src/sessions/admission.ts";
import type { CreateSessionBody } from "../../src/contract/requests.ts";
import { Problem, problemAnswer } from "../../src/contract/problem.ts";

/** The answer a refusal raised by `plan` becomes at the edge (its status and body). */
function refusal(plan: () => unknown): { status: number; body: Record<string, unknown> } {
  try {
    plan();
  } catch (error) {
    if (error instanceof Problem) return problemAnswer(error);
    throw error;
  }
  throw new Error("expected a refusal");
}

const context = (overrides: Partial<AdmissionContext> = {}): AdmissionContext => ({
  sessionId: "k7m3qx4r2abc",
  now: new Date("2026-12-01T00:00:00.000Z"),
  io: ["tty", "streams"],
  supplyTelo: undefined,
  terms: undefined,
  catalog: parseAppsCatalog(JSON.stringify({ agent1: { image: "a", port: 7000 } })),
  watchEnabled: true,
  watchMaxSessions: 2,
  liveWatchSessions: 0,
  defaultRegistryUrl: undefined,
  validateConfig: undefined,
  validateAppName: undefined,
  mintToken: () => "a".repeat(32),
  ...overrides,
});

const body = (overrides: Partial<CreateSessionBody> = {}): CreateSessionBody => ({
  bundle: { entryRelativePath: "/telo.yaml", files: [{ relativePath: "/dir/../telo.yaml", contents: "" }] },
  env: {},
  config: { image: "i", pullPolicy: "missing" },
  inspect: false,
  mode: "run",
  ...overrides,
});

describe("planSession", () => {
  it("defaults one tty app named app from the normalised entry and the top-level ports", () => {
    const plan = planSession(body({ ports: [{ port: 3000, protocol: "tcp" }] }), undefined, context());
    expect(plan).toMatchObject({
      mode: "run",
      apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [{ port: 3000, protocol: "tcp" }], io: "tty" }],
      bundle: { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: "" }] },
      inspect: false,
      selfContained: false,
    });
  });

  it("forces inspect on watch sessions and ignores top-level ports when apps are given", () => {
    const plan = planSession(
      body({ mode: "watch", ports: [{ port: 1, protocol: "tcp" }], apps: [{ name: "web", entryRelativePath: "w.yaml" }] }),
      undefined,
      context(),
    );
    expect(plan).toMatchObject({ inspect: true, apps: [{ name: "web", entryRelativePath: "w.yaml", ports: [], io: "tty" }] });
  });

  it("checks watch capacity before app resolution", () => {
    const plan = () => planSession(body({ mode: "watch", apps: [{ name: "BAD", entryRelativePath: "a" }] }), undefined, context({ liveWatchSessions: 2 }));
    expect(refusal(plan)).toMatchObject({ status: 409, body: { error: "too_many_watch_sessions" } });
  });

  it("gates on terms before paths, and on paths before the config gate", () => {
    const terms = { version: "v1", title: "T", body: "B" };
    expect(refusal(() => planSession(body({ bundle: { entryRelativePath: "../x", files: [] } }), undefined, context({ terms })))).toMatchObject({ status: 428 });
    expect(
      refusal(() => planSession(body({ bundle: { entryRelativePath: "../x", files: [] } }), "v1", context({ terms, validateConfig: () => "no" }))),
    ).toMatchObject({ status: 400, body: { error: "invalid_bundle" } });
    expect(refusal(() => planSession(body(), "v1", context({ terms, validateConfig: () => "no" })))).toEqual({
      status: 400,
      body: { error: "invalid_config", message: "no" },
    });
  });
});

describe("resolveApps", () => {
  it("applies the backend's own name limits after the contract's", () => {
    const tooLong = (name: string) => (name.length > 5 ? `app name '${name}' is too long` : undefined);
    expect(refusal(() => resolveApps([{ name: "web-app", entryRelativePath: "a" }], { io: ["tty"], validateAppName: tooLong }))).toEqual({
      status: 400,
      body: { error: "invalid_app_name", message: "app name 'web-app' is too long" },
    });
    expect(refusal(() => resolveApps([{ name: "Web", entryRelativePath: "a" }], { io: ["tty"], validateAppName: tooLong }))).toMatchObject({ body: { message: expect.stringContaining("DNS label") } });
    expect(resolveApps([{ name: "web", entryRelativePath: "a" }], { io: ["tty"], validateAppName: tooLong })).toHaveLength(1);
  });

  it("keys ports by protocol across the whole session, even within one app", () => {
    expect(refusal(() => resolveApps([{ name: "web", entryRelativePath: "a", ports: [{ port: 1, protocol: "tcp" }, { port: 1, protocol: "tcp" }] }], { io: ["tty"], validateAppName: undefined }))).toMatchObject({
      status: 400,
      body: { error: "port_conflict" },
    });
  });
});

describe("workloadEnv", () => {
  it("prefers the body's env, then the trimmed config value, then the runner default", () => {
    expect(workloadEnv({ TELO_REGISTRY_URL: "a" }, "b", "c").TELO_REGISTRY_URL).toBe("a");
    expect(workloadEnv({}, " b ", "c").TELO_REGISTRY_URL).toBe("b");
    expect(workloadEnv({}, "  ", "c").TELO_REGISTRY_URL).toBe("c");
    expect(workloadEnv({}, undefined, undefined)).toEqual({});
    expect(workloadEnv({ TELO_CACHE_DIR: "/x", KEEP: "1" }, undefined, undefined)).toEqual({ KEEP: "1" });
  });
});

describe("Telo versions at admission", () => {
  const supplyTelo = (version: string) => (version.endsWith("+unreleased") ? "no unreleased image" : undefined);
  const plan = (overrides: Record<string, unknown>, extra: Partial<AdmissionContext> = { supplyTelo }) => () =>
    planSession(body({ config: {}, ...overrides } as Partial<CreateSessionBody>), undefined, context(extra));
  const two = (a: unknown, b: unknown) => [
    { name: "a", entryRelativePath: "a.yaml", ...(a !== undefined && { telo: a }) },
    { name: "b", entryRelativePath: "b.yaml", ...(b !== undefined && { telo: b }) },
  ];

  it("refuses in the contract's order: unsupported, malformed or partial, config beside a version, unavailable", () => {
    const all = { telo: "0.9", config: { image: "" } };
    expect(refusal(plan(all, { supplyTelo: undefined })).body.error).toBe("telo_version_unsupported");
    expect(refusal(plan(all)).body.error).toBe("invalid_telo_version");
    expect(refusal(plan({ apps: two("0.96.0", undefined), config: { image: "x" } })).body.error).toBe("invalid_telo_version");
    expect(refusal(plan({ telo: "0.90.0", config: { pullPolicy: "always" } })).body.error).toBe("invalid_config");
    expect(refusal(plan({ apps: two("0.96.0", "0.90.0") }))).toEqual({
      status: 400,
      body: expect.objectContaining({ error: "telo_version_unavailable", app: "b", version: "0.90.0", reason: expect.stringContaining("older than the oldest kernel") }),
    });
    expect(refusal(plan({ telo: "1.0.0+unreleased" })).body).toMatchObject({ app: "app", version: "1.0.0+unreleased", reason: "no unreleased image" });
  });

  it("takes the top-level version of a single app, or each entry's, and semver precedence for the floor", () => {
    expect(planSession(body({ config: {}, telo: "0.95.0" } as Partial<CreateSessionBody>), undefined, context({ supplyTelo })).apps[0]?.telo).toBe("0.95.0");
    expect(refusal(plan({ telo: "0.95.0-rc.1" })).body.error).toBe("telo_version_unavailable");
    expect(planSession(body({ config: {}, apps: two("0.96.0", "1.2.3-beta.1+sha.9") } as Partial<CreateSessionBody>), undefined, context({ supplyTelo })).apps.map((app) => app.telo)).toEqual(["0.96.0", "1.2.3-beta.1+sha.9"]);
    expect(refusal(plan({ telo: "0.96.0", apps: two("0.96.0", "0.96.0") })).body.error).toBe("invalid_telo_version");
    expect(planSession(body({ config: {} }), undefined, context({ supplyTelo })).apps[0]).not.toHaveProperty("telo");
  });

  it("refuses an io the backend does not offer and gives an app without one the first offered", () => {
    const streamsOnly = context({ io: ["streams"] });
    expect(planSession(body({ apps: [{ name: "a", entryRelativePath: "a.yaml" }] }), undefined, streamsOnly).apps[0]?.io).toBe("streams");
    expect(refusal(() => planSession(body({ apps: [{ name: "a", entryRelativePath: "a.yaml", io: "tty" }] }), undefined, streamsOnly))).toEqual({
      status: 400,
      body: { error: "io_unsupported", message: "app 'a' asks for io 'tty', which this runner does not offer (features.io: streams)" },
    });
  });

  it("makes the plan the launch description: the admitted id and time, the parsed config with its extra keys", () => {
    const spec = planSession(body({ config: { simulate: { a: 1 }, pullPolicy: "never" } }), undefined, context());
    expect(spec).toMatchObject({ sessionId: "k7m3qx4r2abc", createdAt: "2026-12-01T00:00:00.000Z", config: { simulate: { a: 1 }, pullPolicy: "never" } });
  });
});

describe("workload tokens at admission", () => {
  const catalog = parseAppsCatalog(JSON.stringify({
    web: { image: "w", env: { MODE: "x", WEB_TOKEN: "operator value" }, tokenEnv: "WEB_TOKEN" },
    plain: { image: "p" },
    helper: { image: "h", port: 7000, tokenEnv: "AGENT_TOKEN" },
    quiet: { image: "q", port: 7001 },
  }));
  let minted = 0;
  const mintToken = () => String(++minted).padStart(32, "b");

  it("mints one for an app session whose entry names a tokenEnv, and keeps its name out of the plain env", () => {
    const plan = planAppSession("web", { inspect: false, env: { WEB_TOKEN: "client value", OTHER: "1" } }, undefined, context({ catalog, mintToken }));
    expect(plan.token).toEqual({ env: "WEB_TOKEN", value: expect.stringMatching(/^b+\d+$/), holder: "app" });
    expect(plan.env).toEqual({ OTHER: "1", MODE: "x" });
    expect(planAppSession("plain", { inspect: false }, undefined, context({ catalog, mintToken }))).not.toHaveProperty("token");
  });

  it("mints a fresh one per session", () => {
    const first = planAppSession("web", { inspect: false }, undefined, context({ catalog, mintToken })).token?.value;
    const second = planAppSession("web", { inspect: false }, undefined, context({ catalog, mintToken })).token?.value;
    expect(first).not.toBe(second);
  });

  it("mints the agent's for a watch session, and none when the agent was dropped for a port clash", () => {
    const watch = (agent: string, ports: { port: number; protocol: "tcp" }[] = []) =>
      planSession(body({ mode: "watch", agent, apps: [{ name: "a", entryRelativePath: "a.yaml", ports }] }), undefined, context({ catalog, mintToken }));
    expect(watch("helper").token).toMatchObject({ env: "AGENT_TOKEN", holder: "agent" });
    expect(watch("quiet")).not.toHaveProperty("token");
    expect(watch("helper", [{ port: 7000, protocol: "tcp" }])).not.toHaveProperty("token");
  });
});
