/**
 * The existence check of the build path against a real registry (distribution's registry on loopback):
 * a pushed tag is reused without a build Job, anything else — a missing tag, refused or absent
 * credentials, an unreachable registry — builds. Credentials are tried as Basic, and through the
 * registry's token service when it answers with a Bearer challenge. Builds run in the simulated
 * cluster.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BuildConfig } from "../../../src/config/kube.ts";
import { imageTag } from "../../../src/kube/build/dependency-key.ts";
import { basicAuthorization } from "../../../src/kube/build/registry-auth.ts";
import { freePort } from "../../support/ports.ts";
import { useCluster } from "../../sim/helpers.ts";
import { appBundle, BUILD_NAMESPACE, buildConfig, ensureInput, newBuilder, progressRecorder } from "./fixtures.ts";
import { REGISTRY_USER, startRegistry, type TestRegistry } from "./registry.ts";
import { startTokenService, type TokenService } from "./token-service.ts";

const PATH = "telo/sessions";
const PUSH_SECRET = "registry-push";
const BASIC = basicAuthorization(REGISTRY_USER);

const CACHED = [{ message: "Using cached image", done: true }];
const BUILT = [{ message: "Building image…" }, { message: "Image built", done: true }];

const sim = useCluster({ namespaces: [BUILD_NAMESPACE] });

function registryBuild(registry: TestRegistry, overrides: Partial<BuildConfig> = {}): BuildConfig {
  return buildConfig({ repository: `${registry.host}/${PATH}`, registryApiUrl: registry.url, ...overrides });
}

/** Pushes an image under the tag `input`'s bundle and base map to, as an earlier build would have. */
async function pushTagOf(registry: TestRegistry, input: ReturnType<typeof ensureInput>, authorization?: string): Promise<string> {
  const tag = imageTag({ baseImage: input.baseImage, files: input.bundle.files });
  await registry.pushImage(PATH, tag, authorization);
  return tag;
}

async function writePushSecret(auths: Record<string, Record<string, string>>): Promise<void> {
  await sim.core.deleteNamespacedSecret({ name: PUSH_SECRET, namespace: BUILD_NAMESPACE }).catch(() => undefined);
  await sim.core.createNamespacedSecret({
    namespace: BUILD_NAMESPACE,
    body: {
      metadata: { name: PUSH_SECRET },
      type: "kubernetes.io/dockerconfigjson",
      // `data`, not `stringData`: the simulator does not fold stringData into data as the apiserver does.
      data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths })).toString("base64") },
    },
  });
}

describe("existence check against an anonymous registry", () => {
  let registry: TestRegistry;
  beforeAll(async () => {
    registry = await startRegistry();
  });
  afterAll(async () => {
    await registry?.stop();
  });
  beforeEach(() => sim.cluster.resetCounters());

  it("reuses a pushed tag without creating a build Job", async () => {
    const input = ensureInput(appBundle({ Console: "std/console@1.0.0" }));
    const tag = await pushTagOf(registry, input);
    const { builder, bundles } = newBuilder(sim.cluster, registryBuild(registry));
    const { progress, onProgress } = progressRecorder();

    expect(await builder.ensureImage(input, onProgress)).toBe(`${registry.host}/${PATH}:${tag}`);
    expect(progress).toEqual(CACHED);
    expect(sim.cluster.counters().requests).toEqual({});
    expect(bundles.staged).toEqual([]);
  });

  it("builds a tag the registry does not hold", async () => {
    const input = ensureInput(appBundle({ Console: "std/console@2.0.0" }));
    const { builder } = newBuilder(sim.cluster, registryBuild(registry));
    const { progress, onProgress } = progressRecorder();

    const ref = await builder.ensureImage(input, onProgress);
    expect(ref).toBe(`${registry.host}/${PATH}:${imageTag({ baseImage: input.baseImage, files: input.bundle.files })}`);
    expect(progress).toEqual(BUILT);
    expect(sim.cluster.counters().requests["create jobs"]).toBe(1);
  });

  it("a body-only edit maps to the same tag and is reused", async () => {
    const first = ensureInput(appBundle({ Http: "std/http-server@1.0.0" }, "first body"));
    await pushTagOf(registry, first);
    const edited = ensureInput(appBundle({ Http: "std/http-server@1.0.0" }, "edited body"));
    const { builder } = newBuilder(sim.cluster, registryBuild(registry));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(edited, onProgress);
    expect(progress).toEqual(CACHED);
  });

  it("builds when the registry cannot be reached", async () => {
    const input = ensureInput(appBundle({ Console: "std/console@1.0.0" }));
    await pushTagOf(registry, input);
    const closed = `http://127.0.0.1:${await freePort()}`;
    const { builder } = newBuilder(sim.cluster, registryBuild(registry, { registryApiUrl: closed }));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(BUILT);
  });

  it("builds without asking anyone when no registry API URL is configured", async () => {
    const input = ensureInput(appBundle({ Console: "std/console@1.0.0" }));
    const { builder } = newBuilder(sim.cluster, registryBuild(registry, { registryApiUrl: undefined }));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(BUILT);
  });
});

describe("existence check against a registry behind Basic authentication", () => {
  let registry: TestRegistry;
  let input: ReturnType<typeof ensureInput>;
  beforeAll(async () => {
    registry = await startRegistry({ htpasswd: true });
    input = ensureInput(appBundle({ Console: "std/console@1.0.0" }));
    await pushTagOf(registry, input, BASIC);
  });
  afterAll(async () => {
    await registry?.stop();
  });
  beforeEach(() => sim.cluster.resetCounters());

  it("reuses the image with the push Secret's username and password for the registry host", async () => {
    await writePushSecret({ [registry.host]: { username: REGISTRY_USER.username, password: REGISTRY_USER.password } });
    const { builder } = newBuilder(sim.cluster, registryBuild(registry, { pushSecret: PUSH_SECRET }));
    const { progress, onProgress } = progressRecorder();
    sim.cluster.resetCounters();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(CACHED);
    // The Secret is read in the build namespace; nothing else touches the cluster.
    expect(sim.cluster.counters().requests).toEqual({ "get secrets": 1 });
    expect(sim.cluster.recordedRequests()).toEqual([{ verb: "get", apiGroup: "", resource: "secrets", namespace: BUILD_NAMESPACE }]);
  });

  it("reads a base64 `auth` entry keyed by a URL of the registry", async () => {
    const auth = Buffer.from(`${REGISTRY_USER.username}:${REGISTRY_USER.password}`).toString("base64");
    await writePushSecret({ [`http://${registry.host}/v1/`]: { auth } });
    const { builder } = newBuilder(sim.cluster, registryBuild(registry, { pushSecret: PUSH_SECRET }));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(CACHED);
  });

  it("builds when the registry refuses the credentials", async () => {
    await writePushSecret({ [registry.host]: { username: REGISTRY_USER.username, password: "wrong" } });
    const { builder } = newBuilder(sim.cluster, registryBuild(registry, { pushSecret: PUSH_SECRET }));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(BUILT);
  });

  it("builds when asking anonymously (no push Secret configured)", async () => {
    const { builder } = newBuilder(sim.cluster, registryBuild(registry));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(BUILT);
    expect(sim.cluster.counters().requests["get secrets"]).toBeUndefined();
  });

  it("goes anonymous, and so builds, when the push Secret cannot be read", async () => {
    await sim.core.deleteNamespacedSecret({ name: PUSH_SECRET, namespace: BUILD_NAMESPACE }).catch(() => undefined);
    const { builder } = newBuilder(sim.cluster, registryBuild(registry, { pushSecret: PUSH_SECRET }));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(BUILT);
  });
});

describe("existence check against a registry behind a token service", () => {
  let tokens: TokenService;
  let registry: TestRegistry;
  let input: ReturnType<typeof ensureInput>;
  beforeAll(async () => {
    tokens = await startTokenService(REGISTRY_USER);
    registry = await startRegistry({ token: tokens });
    input = ensureInput(appBundle({ Console: "std/console@1.0.0" }));
    await pushTagOf(registry, input, `Bearer ${tokens.tokenFor(`repository:${PATH}:pull,push`)}`);
  });
  afterAll(async () => {
    await registry?.stop();
    await tokens?.stop();
  });
  beforeEach(() => {
    tokens.requests.length = 0;
  });

  it("follows the Bearer challenge with the push Secret's credentials and reuses the image", async () => {
    await writePushSecret({ [registry.host]: { username: REGISTRY_USER.username, password: REGISTRY_USER.password } });
    const { builder } = newBuilder(sim.cluster, registryBuild(registry, { pushSecret: PUSH_SECRET }));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(CACHED);
    // The scope is the registry's own (pull on the repository path), asked for with Basic.
    expect(tokens.requests).toEqual([{ service: tokens.service, scope: `repository:${PATH}:pull`, authorization: BASIC }]);
  });

  it("builds when the token service refuses the credentials", async () => {
    await writePushSecret({ [registry.host]: { username: REGISTRY_USER.username, password: "wrong" } });
    const { builder } = newBuilder(sim.cluster, registryBuild(registry, { pushSecret: PUSH_SECRET }));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(BUILT);
    expect(tokens.requests).toHaveLength(1);
  });

  it("builds without asking for a token when it has no credentials", async () => {
    const { builder } = newBuilder(sim.cluster, registryBuild(registry));
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(input, onProgress);
    expect(progress).toEqual(BUILT);
    expect(tokens.requests).toEqual([]);
  });
});
