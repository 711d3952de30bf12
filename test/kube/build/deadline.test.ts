/**
 * The builder's own wait budget (RUNNER_BUILD_TIMEOUT_SECONDS + 30 s): it ends a wait on a Job
 * that never finishes. Alone in its file because the budget is at least 31 s.
 */
import { describe, expect, it } from "vitest";
import { imageTag } from "../../../src/kube/build/dependency-key.ts";
import { buildJobName } from "../../../src/kube/specs/names.ts";
import { SessionStartError } from "../../../src/sessions/backend-seam.ts";
import { useCluster } from "../../sim/helpers.ts";
import { appBundle, BUILD_NAMESPACE, buildConfig, ensureInput, newBuilder, progressRecorder } from "./fixtures.ts";

const sim = useCluster({ namespaces: [BUILD_NAMESPACE] });

describe("the build wait budget", () => {
  it("gives up on a Job that never finishes", async () => {
    const input = ensureInput(appBundle({ Console: "std/console@9.9.9" }));
    const tag = imageTag({ baseImage: input.baseImage, files: input.bundle.files });
    // A suspended Job of the same name: it never runs and has no deadline of its own running.
    await sim.batch.createNamespacedJob({
      namespace: BUILD_NAMESPACE,
      body: {
        metadata: { name: buildJobName(tag) },
        spec: {
          suspend: true,
          template: { spec: { restartPolicy: "Never", containers: [{ name: "kaniko", image: "gcr.io/kaniko-project/executor:latest" }] } },
        },
      },
    });
    const { builder, bundles } = newBuilder(sim.cluster, buildConfig({ timeoutSeconds: 1 }), { pollMs: 500 });
    const { progress, onProgress } = progressRecorder();

    const error = await builder.ensureImage(input, onProgress).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(SessionStartError);
    expect((error as SessionStartError).stage).toBe("create");
    expect((error as SessionStartError).message).toBe("image build did not finish within 1s");
    expect(progress).toEqual([{ message: "Building image…" }]);
    expect(bundles.size).toBe(0);
  }, 60_000);
});
