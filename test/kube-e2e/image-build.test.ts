/**
 * The image build path through the runner's processes (docs/kubernetes.md "Image builds",
 * "Image delivery"): with RUNNER_IMAGE_REPOSITORY set, a run session reports build
 * progress, then provision progress and `running` on the built image; a failed build ends the
 * session with the build log's tail.
 *
 * The simulator cannot script the Kaniko image itself, so each test stands in for a build
 * already under way: it creates the Job the runner would create (same name, the tag computed
 * from the bundle) with a container whose command line the simulator runs for real. The runner
 * then takes its create's 409 as "a build for this tag exists" and waits on it, as it would.
 * Simulator-only: a real build needs the Kaniko image and a registry the node can push to.
 */
import { BatchV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imageTag } from "../../src/kube/build/dependency-key.ts";
import { buildJobName } from "../../src/kube/specs/names.ts";
import { type KubeRunner, SESSION_NAMESPACE, startKubeRunner } from "../support/kube-runner.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { sessionBody } from "../support/session-body.ts";
import { waitFor } from "../support/wait.ts";
import { eventsOf, eventsUntil, isStatus } from "../support/streams.ts";

const REPOSITORY = "registry.example.test/telo-sessions";
const BUILD_NAMESPACE = "telo-builds";

describe("image build path", () => {
  let runner: KubeRunner;
  let batch: BatchV1Api;
  beforeAll(async () => {
    runner = await startKubeRunner({ env: { RUNNER_IMAGE_REPOSITORY: REPOSITORY, RUNNER_BUILD_TIMEOUT_SECONDS: "60" } });
    batch = runner.sim.kubeConfig().makeApiClient(BatchV1Api);
  });
  afterAll(() => runner?.close());

  /** A bundle whose dependency key is its own, so each test builds a distinct tag. */
  const bundleFor = (name: string) => ({
    entryRelativePath: "telo.yaml",
    files: [{ relativePath: "telo.yaml", contents: `kind: Telo.Application\nmetadata: {name: ${name}}\nimports:\n  ${name}: std/${name}\n` }],
  });

  const buildUnderWay = async (bundle: ReturnType<typeof bundleFor>, script: string) => {
    const tag = imageTag({ baseImage: "telorun/node:latest-slim", files: bundle.files });
    await batch.createNamespacedJob({
      namespace: BUILD_NAMESPACE,
      body: {
        metadata: { name: buildJobName(tag), labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/build": "true" } },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: "Never",
              containers: [
                {
                  name: "kaniko",
                  image: "busybox:stable",
                  command: ["sh", "-c", script],
                  resources: { limits: { cpu: "100m", memory: "64Mi" }, requests: { cpu: "100m", memory: "64Mi" } },
                },
              ],
            },
          },
        },
      },
    });
    return tag;
  };

  it("reports the build, then provisions and runs the built image", async () => {
    const bundle = bundleFor("built");
    const tag = await buildUnderWay(bundle, "echo building; sleep 0.3; exit 0");
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: {} }, { bundle }));
    const events = eventsOf(await eventsUntil(runner.client, sessionId, isStatus("running")));
    const progress = events.flatMap((event) => (event.type === "progress" ? [`${event.phase}:${event.message}${event.done ? " (done)" : ""}`] : []));
    expect(progress.slice(0, 2)).toEqual(["build:Building image…", "build:Image built (done)"]);
    expect(progress.slice(2)).toContain("provision:Scheduling");
    const pod = await runner.core.readNamespacedPod({ name: `telo-run-${sessionId}`, namespace: SESSION_NAMESPACE });
    expect(pod.spec?.containers[0]).toMatchObject({ image: `${REPOSITORY}:${tag}`, imagePullPolicy: "IfNotPresent" });
    await runner.client.deleteSession(sessionId);
  });

  it("fails the session with the build log's tail when the build fails", async () => {
    const bundle = bundleFor("broken");
    await buildUnderWay(bundle, "echo resolving modules; echo 'error: module std/broken not found'; exit 1");
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: {} }, { bundle }));
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    expect(end).toEqual({
      type: "status",
      status: { kind: "failed", message: expect.stringMatching(/^create: image build failed: (.|\n)*error: module std\/broken not found$/) },
    });
    await waitFor("no session pod", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  });

  it("times each build by outcome on /metrics, and the build stage of each start", async () => {
    const samples = await scrape(runner.baseUrl);
    expect(valueOf(samples, "runner_image_build_seconds_count", { process: "supervisor", outcome: "succeeded" })).toBe(1);
    expect(valueOf(samples, "runner_image_build_seconds_count", { process: "supervisor", outcome: "failed" })).toBe(1);
    expect(valueOf(samples, "runner_session_start_seconds_count", { process: "supervisor", stage: "build" })).toBe(2);
    expect(valueOf(samples, "runner_session_start_failures_total", { process: "supervisor", mode: "run", reason: "build" })).toBe(1);
  });
});
