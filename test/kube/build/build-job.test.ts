/**
 * The build Job side of the build path against the simulated cluster: create, wait, success,
 * failure with the pod's log tail, joining an existing Job (409), single flight, create and
 * read failures, base digest pinning. Kubernetes requests are counted by the simulator.
 *
 * The simulator runs a Job's pods as their annotations say, and the runner's Job template
 * carries none; a build that fails with output is therefore scripted as a Job of the same name
 * created beforehand (the 409 path), whose template the test writes.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { V1Job } from "@kubernetes/client-node";
import { fetch } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { imageTag } from "../../../src/kube/build/dependency-key.ts";
import { DockerHubClient } from "../../../src/kube/images/image-catalog.ts";
import { buildJobName } from "../../../src/kube/specs/names.ts";
import { ANNOTATION_PREFIX } from "../../../src/sim/index.ts";
import { SessionStartError } from "../../../src/sessions/backend-seam.ts";
import { useCluster } from "../../sim/helpers.ts";
import { waitFor } from "../../support/wait.ts";
import {
  appBundle,
  archiveFiles,
  BUILD_NAMESPACE,
  buildConfig,
  ensureInput,
  MANAGED_BY,
  newBuilder,
  progressRecorder,
} from "./fixtures.ts";

const REPOSITORY = "registry.example.com/telo/sessions";
const BUILT = [{ message: "Building image…" }, { message: "Image built", done: true }];

const sim = useCluster({ namespaces: [BUILD_NAMESPACE] });
beforeEach(() => {
  sim.cluster.resetCounters();
  sim.cluster.faults.clear();
});

/** A distinct bundle per test, so each test has its own tag and Job name. */
let serial = 0;
function freshInput(overrides: Parameters<typeof ensureInput>[1] = {}) {
  serial += 1;
  return ensureInput(appBundle({ Console: `std/console@1.0.${serial}` }), overrides);
}

function tagOf(input: ReturnType<typeof ensureInput>, baseDigest?: string): string {
  return imageTag({ baseImage: input.baseImage, files: input.bundle.files, ...(baseDigest && { baseDigest }) });
}

/** A Job named as the builder would name it, with a pod template the test scripts. */
async function precreateJob(tag: string, annotations: Record<string, string>, spec: Partial<V1Job["spec"]> = {}): Promise<V1Job> {
  return sim.batch.createNamespacedJob({
    namespace: BUILD_NAMESPACE,
    body: {
      metadata: { name: buildJobName(tag) },
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { annotations },
          spec: {
            restartPolicy: "Never",
            initContainers: [{ name: "context-fetch", image: "busybox:stable", command: ["sh", "-c", "true"] }],
            containers: [{ name: "kaniko", image: "gcr.io/kaniko-project/executor:latest" }],
          },
        },
        ...spec,
      },
    },
  });
}

async function startError(promise: Promise<unknown>): Promise<SessionStartError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(SessionStartError);
  return error as SessionStartError;
}

describe("building an image in the simulated cluster", () => {
  it("stages the context, creates the Job, waits for it and drops the context", async () => {
    const input = freshInput();
    const tag = tagOf(input);
    const { builder, bundles } = newBuilder(sim.cluster, buildConfig());
    const { progress, onProgress } = progressRecorder();

    expect(await builder.ensureImage(input, onProgress)).toBe(`${REPOSITORY}:${tag}`);
    expect(progress).toEqual(BUILT);

    const [staged] = bundles.staged;
    expect(bundles.staged).toHaveLength(1);
    expect(staged?.id).toBe(`build-${tag}`);
    expect(staged?.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/internal/bundles/build-${tag}\\?token=[0-9a-f]{48}$`));
    const files = archiveFiles(staged!.archive);
    expect([...files.keys()]).toEqual(["telo.yaml", "Dockerfile"]);
    expect(files.get("Dockerfile")).toContain("FROM telorun/node:0.14.0-slim\n");
    expect(files.get("Dockerfile")).toContain('RUN ["telo","install","/app/telo.yaml"]\n');
    expect(bundles.size).toBe(0);

    const job = await sim.batch.readNamespacedJob({ name: `telo-build-${tag}`, namespace: BUILD_NAMESPACE });
    expect(job.metadata?.labels).toMatchObject({ "app.kubernetes.io/managed-by": MANAGED_BY, "telo.run/build": "true" });
    expect(job.spec?.template.spec?.initContainers?.[0]?.env).toEqual([{ name: "ARCHIVE_URL", value: staged!.url }]);
    expect(job.status?.succeeded).toBe(1);

    // One create, then reads of the Job until it succeeded; no pod is read on success.
    const requests = sim.cluster.counters().requests;
    expect(Object.keys(requests).sort()).toEqual(["create jobs", "get jobs"]);
    expect(requests["create jobs"]).toBe(1);
  });

  it("keeps reading the Job through a failed read", async () => {
    sim.cluster.faults.failNext({ verb: "get", resource: "jobs", namespace: BUILD_NAMESPACE, code: 500 });
    const { builder } = newBuilder(sim.cluster, buildConfig());
    const { progress, onProgress } = progressRecorder();

    await builder.ensureImage(freshInput(), onProgress);
    expect(progress).toEqual(BUILT);
    expect(sim.cluster.counters().requests["get jobs"]).toBeGreaterThanOrEqual(2);
  });

  it("fails with the last 20 lines of the build's log", async () => {
    const input = freshInput();
    const output = Array.from({ length: 25 }, (_, i) => `kaniko line ${i + 1}`).join("\n");
    await precreateJob(tagOf(input), {
      [`${ANNOTATION_PREFIX}exit-code.kaniko`]: "1",
      [`${ANNOTATION_PREFIX}stderr.kaniko`]: `${output}\n`,
    });
    sim.cluster.resetCounters();
    const { builder, bundles } = newBuilder(sim.cluster, buildConfig());
    const { progress, onProgress } = progressRecorder();

    const error = await startError(builder.ensureImage(input, onProgress));
    const tail = Array.from({ length: 20 }, (_, i) => `kaniko line ${i + 6}`).join("\n");
    expect(error.stage).toBe("create");
    expect(error.message).toBe(`image build failed: ${tail}`);
    expect(progress).toEqual([{ message: "Building image…" }]);
    expect(bundles.size).toBe(0);

    const requests = sim.cluster.counters().requests;
    expect(requests["create jobs"]).toBe(1); // answered 409: the Job existed
    expect(requests["list pods"]).toBe(1);
    expect(requests["get pods/log"]).toBe(1);
    expect(sim.cluster.recordedRequests().filter((r) => r.resource === "pods").map((r) => r.namespace)).toEqual([BUILD_NAMESPACE, BUILD_NAMESPACE]);
  });

  it("reads the log of the container that failed, even an init container", async () => {
    const input = freshInput();
    await precreateJob(tagOf(input), {
      [`${ANNOTATION_PREFIX}exit-code.context-fetch`]: "1",
      [`${ANNOTATION_PREFIX}stderr.context-fetch`]: "wget: server returned error: HTTP/1.1 404 Not Found\n",
    });
    const { builder } = newBuilder(sim.cluster, buildConfig());

    const error = await startError(builder.ensureImage(input, () => {}));
    expect(error.message).toBe("image build failed: wget: server returned error: HTTP/1.1 404 Not Found");
  });

  it("fails without a tail when the build pod never ran", async () => {
    // The simulator cannot pull an image named `nonexistent`: the Job runs into its deadline.
    const build = buildConfig({ builderImage: "gcr.io/kaniko-project/nonexistent:latest", timeoutSeconds: 1 });
    const { builder, bundles } = newBuilder(sim.cluster, build);

    const error = await startError(builder.ensureImage(freshInput(), () => {}));
    expect(error.stage).toBe("create");
    expect(error.message).toBe("image build failed");
    expect(bundles.size).toBe(0);
  });

  it("waits on a Job already building the same tag instead of creating another", async () => {
    const input = freshInput();
    const existing = await precreateJob(tagOf(input), {});
    const { builder } = newBuilder(sim.cluster, buildConfig());
    const { progress, onProgress } = progressRecorder();

    expect(await builder.ensureImage(input, onProgress)).toBe(`${REPOSITORY}:${tagOf(input)}`);
    expect(progress).toEqual(BUILT);
    const job = await sim.batch.readNamespacedJob({ name: buildJobName(tagOf(input)), namespace: BUILD_NAMESPACE });
    expect(job.metadata?.uid).toBe(existing.metadata?.uid);
  });

  it("fails when the Job it waits on is deleted", async () => {
    const input = freshInput();
    // Suspended: the Job never runs, so only its deletion can end the wait.
    await precreateJob(tagOf(input), {}, { suspend: true });
    sim.cluster.resetCounters();
    const { builder, bundles } = newBuilder(sim.cluster, buildConfig());

    const outcome = startError(builder.ensureImage(input, () => {}));
    await waitFor("the builder to find the existing Job", () => (sim.cluster.counters().requests["get jobs"] ?? 0) >= 1);
    await sim.batch.deleteNamespacedJob({ name: buildJobName(tagOf(input)), namespace: BUILD_NAMESPACE, propagationPolicy: "Background" });

    const error = await outcome;
    expect(error.message).toBe(`image build job '${buildJobName(tagOf(input))}' disappeared before completing`);
    expect(bundles.size).toBe(0);
  });

  it("fails with a client-safe reason when the Job cannot be created, and drops the context", async () => {
    sim.cluster.faults.failNext({
      verb: "create",
      resource: "jobs",
      code: 403,
      message: 'jobs.batch is forbidden: User "system:serviceaccount:telo-runner:k8s-runner" cannot create resource "jobs"',
    });
    const { builder, bundles } = newBuilder(sim.cluster, buildConfig());

    const error = await startError(builder.ensureImage(freshInput(), () => {}));
    expect(error.stage).toBe("create");
    expect(error.message).toBe(
      "failed to create image build job: the runner is not permitted to do this (Forbidden, HTTP 403). The cluster operator must check the runner's RBAC.",
    );
    expect(error.cause).toBeDefined();
    expect(bundles.size).toBe(0);
    expect(sim.cluster.counters().requests).toEqual({ "create jobs": 1 });
  });

  it("refuses a bundle path the build context cannot hold", async () => {
    // Long names fit (pax headers); a NUL byte never does.
    const bundle = { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml\u0000.bak", contents: "kind: X\n" }] };
    const { builder } = newBuilder(sim.cluster, buildConfig());

    const error = await startError(builder.ensureImage(ensureInput(bundle), () => {}));
    expect(error.stage).toBe("create");
    expect(error.message).toMatch(/^invalid bundle relativePath 'telo\.yaml\\u0000\.bak'/);
    expect(sim.cluster.counters().requests).toEqual({});
  });
});

describe("single flight", () => {
  it("lets a concurrent request for the same image wait for the one build", async () => {
    const input = freshInput();
    const { builder } = newBuilder(sim.cluster, buildConfig());
    const first = progressRecorder();
    const second = progressRecorder();

    const [a, b] = await Promise.all([
      builder.ensureImage(input, first.onProgress),
      builder.ensureImage({ ...input, sessionId: "b7m3qx4r2abc" }, second.onProgress),
    ]);
    expect(a).toBe(`${REPOSITORY}:${tagOf(input)}`);
    expect(b).toBe(a);
    expect(first.progress).toEqual(BUILT);
    expect(second.progress).toEqual([{ message: "Waiting for in-progress build…" }]);
    expect(sim.cluster.counters().requests["create jobs"]).toBe(1);

    // Settled attempts leave the map: the next request starts its own (and joins the finished Job).
    const third = progressRecorder();
    await builder.ensureImage(input, third.onProgress);
    expect(third.progress).toEqual(BUILT);
    expect(sim.cluster.counters().requests["create jobs"]).toBe(2);
  });

  it("hands the shared failure to every waiter", async () => {
    sim.cluster.faults.failNext({ verb: "create", resource: "jobs", code: 500 });
    const input = freshInput();
    const { builder } = newBuilder(sim.cluster, buildConfig());

    const [a, b] = await Promise.all([startError(builder.ensureImage(input, () => {})), startError(builder.ensureImage(input, () => {}))]);
    expect(b).toBe(a);
    expect(a.message).toBe("failed to create image build job: the Kubernetes API rejected the request (InternalError, HTTP 500)");
  });

  it("builds different images side by side", async () => {
    const { builder } = newBuilder(sim.cluster, buildConfig());
    const first = progressRecorder();
    const second = progressRecorder();

    await Promise.all([builder.ensureImage(freshInput(), first.onProgress), builder.ensureImage(freshInput(), second.onProgress)]);
    expect(first.progress).toEqual(BUILT);
    expect(second.progress).toEqual(BUILT);
    expect(sim.cluster.counters().requests["create jobs"]).toBe(2);
  });
});

describe("base digest pinning", () => {
  const DIGEST = `sha256:${"d".repeat(64)}`;
  let hub: Server;
  let hubUrl: string;
  const hubRequests: string[] = [];

  beforeAll(async () => {
    hub = createServer((req, res) => {
      hubRequests.push(req.url ?? "");
      if (req.url === "/v2/repositories/telorun/node/tags/latest-slim") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ digest: DIGEST }));
        return;
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "object not found" }));
    });
    await new Promise<void>((resolve) => hub.listen(0, "127.0.0.1", resolve));
    hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => hub.close(() => resolve()));
  });
  beforeEach(() => {
    hubRequests.length = 0;
  });

  const builderWithHub = () => newBuilder(sim.cluster, buildConfig(), { hub: new DockerHubClient({ fetch, baseUrl: hubUrl }) });

  it("pins a moving base tag under `always`: the digest is in the tag and the FROM line", async () => {
    const input = freshInput({ baseImage: "telorun/node:latest-slim", pullPolicy: "always" });
    const { builder, bundles } = builderWithHub();
    const { progress, onProgress } = progressRecorder();

    expect(await builder.ensureImage(input, onProgress)).toBe(`${REPOSITORY}:${tagOf(input, DIGEST)}`);
    expect(tagOf(input, DIGEST)).not.toBe(tagOf(input));
    expect(progress).toEqual(BUILT);
    expect(archiveFiles(bundles.staged[0]!.archive).get("Dockerfile")).toContain(`FROM telorun/node:latest-slim@${DIGEST}\n`);
    expect(hubRequests).toEqual(["/v2/repositories/telorun/node/tags/latest-slim"]);
  });

  it("never asks Docker Hub under `missing` or `never`", async () => {
    const { builder } = builderWithHub();
    for (const pullPolicy of ["missing", "never"] as const) {
      const input = freshInput({ baseImage: "telorun/node:latest-slim", pullPolicy });
      expect(await builder.ensureImage(input, () => {})).toBe(`${REPOSITORY}:${tagOf(input)}`);
    }
    expect(hubRequests).toEqual([]);
  });

  it("keeps the unpinned tag and says so when Docker Hub cannot answer", async () => {
    const input = freshInput({ baseImage: "telorun/node:gone", pullPolicy: "always" });
    const { builder } = builderWithHub();
    const { progress, onProgress } = progressRecorder();

    expect(await builder.ensureImage(input, onProgress)).toBe(`${REPOSITORY}:${tagOf(input)}`);
    expect(progress).toEqual([
      { message: "Base image freshness check failed (Docker Hub tag request for 'telorun/node:gone' failed: 404 Not Found); using cached image" },
      ...BUILT,
    ]);
  });

  it("resolves nothing for a base on another registry", async () => {
    const input = freshInput({ baseImage: "ghcr.io/acme/node:1", pullPolicy: "always" });
    const { builder } = builderWithHub();
    const { progress, onProgress } = progressRecorder();

    expect(await builder.ensureImage(input, onProgress)).toBe(`${REPOSITORY}:${tagOf(input)}`);
    expect(progress).toEqual(BUILT);
    expect(hubRequests).toEqual([]);
  });
});
