/**
 * Telo versions and the config gate end to end (docs/telo-versions.md), through both processes
 * on either cluster: the capabilities, every refusal with its status, code and fields (and which
 * wins when several apply), the version image and pull policy on the pods of run, watch and
 * warm-pool sessions, the kernel's reported version on `run started`, the workspace marker by
 * kernel version, nested entries, and the old client's body unchanged.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/contract/wire.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { eventsOf, eventsUntil, isStatus } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

/**
 * The version images: on the simulated cluster any name pulls; on the real one the kernel
 * stand-in is loaded under `<repository>:<V>-standin` for the versions used here
 * (test/cluster/fixture/cluster.ts), and `never` keeps the kubelet off the network.
 */
const REPOSITORY = ON_REAL_CLUSTER ? "k8s-runner.local/telo-kernel" : "telorun/node";
const VARIANT = ON_REAL_CLUSTER ? "standin" : "slim";
const versionImage = (version: string) => `${REPOSITORY}:${version}-${VARIANT}`;

type Body = Record<string, unknown> & { config?: Record<string, unknown> };

/** A create body naming no image and no pull policy: what Studio sends beside a version. */
function versionBody(telo: string | undefined, overrides: Record<string, unknown> = {}): Body {
  const body = kubeSessionBody({}, overrides) as Body;
  const { image: _image, pullPolicy: _pullPolicy, ...rest } = body.config ?? {};
  return { ...body, config: rest, ...(telo !== undefined && { telo }) };
}

async function post(runner: ClusterRunner, path: string, body: unknown) {
  const response = await fetch(`${runner.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function podOf(runner: ClusterRunner, sessionId: string): Promise<V1Pod> {
  return waitFor("the session's pod", async () => {
    const pods = await runner.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `telo.run/session-id=${sessionId}` });
    return pods.items[0];
  });
}

const images = (pod: V1Pod) => Object.fromEntries((pod.spec?.containers ?? []).map((c) => [c.name, `${c.image} ${c.imagePullPolicy}`]));

const runStarted = (app: string) => (event: RunEvent) => event.type === "run" && event.app === app && event.phase === "started";

describe(`Telo versions on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({
      env: {
        RUNNER_WATCH_SESSIONS: "true",
        RUNNER_TELO_IMAGE_REPOSITORY: REPOSITORY,
        RUNNER_TELO_IMAGE_VARIANT: VARIANT,
        RUNNER_PULL_POLICY: "never",
        RUNNER_APPS: JSON.stringify({ tool: { image: ON_REAL_CLUSTER ? "k8s-runner.local/telo-kernel:standin" : "acme/tool:1", pullPolicy: "missing" } }),
      },
    });
  });
  afterAll(async () => {
    await waitFor("every session pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 60_000);
    await runner?.close();
  });

  it("advertises versions: the feature, the superseded keys, both keys deprecated and optional", async () => {
    const capabilities = await runner.client.capabilities();
    expect(capabilities.features.teloVersions).toBe(true);
    expect(capabilities.config.supersededByTelo).toEqual(["image", "pullPolicy"]);
    const schema = capabilities.config.schema as { required: string[]; properties: Record<string, { deprecated?: boolean }> };
    expect(schema.required).toEqual([]);
    expect(schema.properties.image?.deprecated).toBe(true);
    expect(schema.properties.pullPolicy?.deprecated).toBe(true);
  });

  it.each([
    ["a malformed version", versionBody("0.96"), "invalid_telo_version", /telo "0\.96" of app 'app' is not a version/],
    ["a number", versionBody(undefined, { telo: 96 }), "invalid_telo_version", /is not a version/],
    ["a malformed version beside an image (the version is judged first)", { ...versionBody("latest"), config: { image: "x" } }, "invalid_telo_version", /not a version/],
    [
      "only some apps naming one",
      versionBody(undefined, { apps: [{ name: "a", entryRelativePath: "telo.yaml", telo: "0.96.0" }, { name: "b", entryRelativePath: "telo.yaml" }] }),
      "invalid_telo_version",
      /app 'b' names no telo version while others do/,
    ],
    ["a top-level version for several apps", versionBody("0.96.0", { apps: [{ name: "a", entryRelativePath: "telo.yaml" }, { name: "b", entryRelativePath: "telo.yaml" }] }), "invalid_telo_version", /top-level telo/],
    ["an image beside a version", { ...versionBody("0.96.0"), config: { image: "telorun/node:latest-slim" } }, "invalid_config", /^`config\.image` cannot be given beside a telo version/],
    ["a pull policy beside a version", { ...versionBody("0.96.0"), config: { pullPolicy: "always" } }, "invalid_config", /^`config\.pullPolicy` cannot be given beside a telo version/],
    ["an image beside a version too old (the config is judged first)", { ...versionBody("0.90.0"), config: { image: "x" } }, "invalid_config", /beside a telo version/],
    ["an empty image", { ...versionBody(undefined), config: { image: "" } }, "invalid_config", /^`config\.image` must be a non-empty string when given$/],
    ["an unknown pull policy", { ...versionBody(undefined), config: { pullPolicy: "sometimes" } }, "invalid_config", /^`config\.pullPolicy` must be one of missing, always, never when given$/],
  ])("refuses %s with 400", async (_label, body, error, message) => {
    const answer = await post(runner, "/v1/sessions", body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error, message: expect.stringMatching(message) });
  });

  it("refuses a version older than the oldest supervised kernel, and an unreleased one, naming app, version and reason", async () => {
    const old = await post(runner, "/v1/sessions", versionBody("0.94.9"));
    expect(old.status).toBe(400);
    expect(old.body).toEqual({
      error: "telo_version_unavailable",
      message: expect.stringContaining("telo 0.94.9 is not available for app 'app'"),
      app: "app",
      version: "0.94.9",
      reason: "telo 0.94.9 is older than the oldest kernel this runner can supervise (0.95.0). Pin telo 0.95.0 or newer for this workspace",
    });
    const unreleased = await post(runner, "/v1/sessions", versionBody(undefined, { apps: [{ name: "web", entryRelativePath: "telo.yaml", telo: "0.98.0+unreleased" }] }));
    expect(unreleased).toEqual({
      status: 400,
      body: {
        error: "telo_version_unavailable",
        message: expect.any(String),
        app: "web",
        version: "0.98.0+unreleased",
        reason:
          "0.98.0+unreleased is an unreleased build, which has no published image. Pin a released telo version for this workspace, or have the runner's operator set RUNNER_TELO_UNRELEASED_IMAGE to a kernel image built from that same tree",
      },
    });
  });

  it("takes a config without the known keys, or none at all, and a probe with any object", async () => {
    const none = await post(runner, "/v1/sessions", { ...versionBody(undefined), config: undefined });
    expect(none.status).toBe(201);
    const opaque = await post(runner, "/v1/sessions", { ...versionBody(undefined), config: { somethingNew: { nested: true }, registryUrl: "" } });
    expect(opaque.status).toBe(201);
    for (const { body } of [none, opaque]) {
      const pod = await podOf(runner, body.sessionId);
      expect(images(pod).session).toBe(`${ON_REAL_CLUSTER ? "k8s-runner.local/telo-kernel:standin" : "telorun/node:latest-slim"} IfNotPresent`);
      await runner.client.deleteSession(body.sessionId);
    }
    expect(await post(runner, "/v1/probe", { config: { anything: [1, 2] } })).toEqual({ status: 200, body: { status: "ready" } });
  });

  it("runs a version's image, pulled by RUNNER_PULL_POLICY, and passes on the version the kernel reports", async () => {
    // Run events come from the kernel's debug stream, which a run session opens with `inspect`.
    const { status, body } = await post(runner, "/v1/sessions", versionBody("0.97.0", { inspect: true }));
    expect(status).toBe(201);
    expect(images(await podOf(runner, body.sessionId))).toEqual({ session: `${versionImage("0.97.0")} Never` });
    const started = eventsOf(await eventsUntil(runner.client, body.sessionId, runStarted("app"))).at(-1);
    expect(started).toMatchObject({ type: "run", phase: "started", telo: "0.97.0" });
    await runner.client.deleteSession(body.sessionId);
  });

  it("runs a nested entry: the kernel's command line names it below the bundle root, and it runs", async () => {
    const entry = "apps/todo/telo.yaml";
    const bundle = { entryRelativePath: entry, files: [{ relativePath: entry, contents: "kind: Telo.Application\nmetadata: { name: todo }\n" }] };
    const { body } = await post(runner, "/v1/sessions", kubeSessionBody({}, { bundle, inspect: true }));
    const pod = await podOf(runner, body.sessionId);
    expect(pod.spec?.containers?.[0]?.command?.at(-1)).toBe(`/app/${entry}`);
    expect(pod.spec?.containers?.[0]?.workingDir).toBe("/work");
    expect(eventsOf(await eventsUntil(runner.client, body.sessionId, runStarted("app"))).at(-1)).toMatchObject({ phase: "started" });
    await runner.client.deleteSession(body.sessionId);
    const climbing = await post(runner, "/v1/sessions", kubeSessionBody({}, { bundle: { ...bundle, entryRelativePath: "apps/../../telo.yaml" } }));
    expect(climbing).toMatchObject({ status: 400, body: { error: "invalid_bundle" } });
  });

  it("gives a watch session's app containers their versions and every container, the workspace's too, RUNNER_PULL_POLICY", async () => {
    const files = [
      { relativePath: "apps/todo/telo.yaml", contents: "kind: Telo.Application\nmetadata: { name: todo }\n" },
      { relativePath: "apps/api/telo.yaml", contents: "kind: Telo.Application\nmetadata: { name: api }\n" },
    ];
    const apps = [
      { name: "todo", entryRelativePath: "apps/todo/telo.yaml", telo: "0.97.0" },
      { name: "api", entryRelativePath: "apps/api/telo.yaml", telo: "0.96.0" },
    ];
    const { status, body } = await post(runner, "/v1/sessions", versionBody(undefined, { mode: "watch", apps, bundle: { entryRelativePath: "apps/todo/telo.yaml", files } }));
    expect(status).toBe(201);
    await eventsUntil(runner.client, body.sessionId, isStatus("running"));
    const pod = await podOf(runner, body.sessionId);
    expect(images(pod)).toEqual({
      workspace: `${ON_REAL_CLUSTER ? "k8s-runner.local/telo-kernel:standin" : "telorun/node:latest-slim"} Never`,
      "app-todo": `${versionImage("0.97.0")} Never`,
      "app-api": `${versionImage("0.96.0")} Never`,
    });
    // Nested entries: the kernel is pointed at the entry below the workspace root, and runs.
    const todo = pod.spec?.containers?.find((container) => container.name === "app-todo");
    expect(todo?.env).toContainEqual({ name: "TELO_ENTRY", value: "/workspace/apps/todo/telo.yaml" });
    await eventsUntil(runner.client, body.sessionId, runStarted("api"));
    // Both kernels accept the comment-only marker, so that is what was seeded.
    expect((await runner.client.workspaceFile(body.sessionId, "telo-workspace.yaml")).content).not.toContain("modules");
    await runner.client.deleteSession(body.sessionId);
  });

  /** The app's kernel booted (Kernel.Started) or its run failed: the events up to either. */
  const bootOf = async (sessionId: string, app: string) =>
    eventsOf(
      await eventsUntil(runner.client, sessionId, (event) => (event.type === "debug" && event.app === app && event.frame.event === "Kernel.Started") || (event.type === "run" && event.app === app && event.phase === "failed")),
    ).at(-1);

  it("seeds the old marker for a kernel before the comment-only one, which then runs", async () => {
    const { body } = await post(runner, "/v1/sessions", versionBody(undefined, { mode: "watch", apps: [{ name: "web", entryRelativePath: "telo.yaml", telo: "0.95.2" }] }));
    expect(await bootOf(body.sessionId, "web")).toMatchObject({ type: "debug", frame: { event: "Kernel.Started" } });
    expect((await runner.client.workspaceFile(body.sessionId, "telo-workspace.yaml")).content).toContain('modules: ["*"]');
    await runner.client.deleteSession(body.sessionId);
  });

  // The marker a bundle brings is kept as it is: an old kernel then fails on an empty one, as it would anywhere.
  it("shows an old kernel refusing a comment-only marker", async () => {
    const files = [
      { relativePath: "telo.yaml", contents: "kind: Telo.Application\n" },
      { relativePath: "telo-workspace.yaml", contents: "# the workspace root\n" },
    ];
    const { body } = await post(runner, "/v1/sessions", versionBody(undefined, { mode: "watch", apps: [{ name: "web", entryRelativePath: "telo.yaml", telo: "0.95.2" }], bundle: { entryRelativePath: "telo.yaml", files } }));
    expect(await bootOf(body.sessionId, "web")).toEqual({ type: "run", app: "web", generation: 1, phase: "failed", reason: "INVALID_WORKSPACE_MARKER" });
    await runner.client.deleteSession(body.sessionId);
  });

  it("keeps a predefined app's catalog image (the apps door takes no version)", async () => {
    const answer = await post(runner, "/v1/apps/tool/sessions", { telo: "0.97.0" });
    expect(answer.status).toBe(201);
    expect(images(await podOf(runner, answer.body.sessionId)).session).toMatch(/^(acme\/tool:1|k8s-runner\.local\/telo-kernel:standin) IfNotPresent$/);
    await runner.client.deleteSession(answer.body.sessionId);
  });
});

describe("a version session and the warm pool", () => {
  let runner: ClusterRunner;
  const READY_MS = ON_REAL_CLUSTER ? 90_000 : 20_000;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: { RUNNER_WARM_POOL_SIZE: "1", RUNNER_TELO_IMAGE_REPOSITORY: REPOSITORY, RUNNER_TELO_IMAGE_VARIANT: VARIANT, RUNNER_PULL_POLICY: "never" } });
  });
  afterAll(async () => {
    if (!runner) return;
    await runner.stopSupervisor();
    await runner.core.deleteCollectionNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: "telo.run/pool=true", gracePeriodSeconds: 0 });
    await waitFor("the pool pods to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, READY_MS);
    await runner.close();
  });

  it("starts cold on the version's image when the pool holds RUNNER_IMAGE, and leaves the pool pod unclaimed", async () => {
    const metric = async (name: string, labels: Record<string, string>) => valueOf(await scrape(runner.baseUrl), name, labels);
    await waitFor("a ready pool pod", async () => (await metric("runner_warm_pool_pods", { state: "ready" })) === 1 || undefined, READY_MS);
    const { body } = await post(runner, "/v1/sessions", versionBody("0.97.0"));
    await eventsUntil(runner.client, body.sessionId, isStatus("running"));
    const pod = await podOf(runner, body.sessionId);
    expect(pod.metadata?.name).toBe(`telo-run-${body.sessionId}`);
    expect(images(pod)).toEqual({ session: `${versionImage("0.97.0")} Never` });
    expect(await metric("runner_warm_pool_starts_total", { start: "cold" })).toBe(1);
    expect(await metric("runner_warm_pool_pods", { state: "ready" })).toBe(1);
    await runner.client.deleteSession(body.sessionId);
  });
});

describe("a runner without Telo versions", () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: { RUNNER_TELO_VERSIONS: "false" } });
  });
  afterAll(() => runner?.close());

  it("advertises none and refuses any telo before judging it or the config", async () => {
    const capabilities = await runner.client.capabilities();
    expect(capabilities.features.teloVersions).toBeUndefined();
    expect(capabilities.config.supersededByTelo).toBeUndefined();
    expect((capabilities.config.schema as { required: string[] }).required).toEqual(["image", "pullPolicy"]);
    const answer = await post(runner, "/v1/sessions", { ...versionBody("not-a-version"), config: { image: "" } });
    expect(answer).toEqual({ status: 400, body: { error: "telo_version_unsupported", message: expect.stringContaining("features.teloVersions") } });
  });
});
