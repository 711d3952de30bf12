/** Shared inputs of the image build tests: config, bundles, a builder against a simulated cluster. */
import { gunzipSync } from "node:zlib";
import type { BuildConfig } from "../../../src/config/kube.ts";
import type { RunBundle } from "../../../src/contract/wire.ts";
import { kubeApi } from "../../../src/kube/cluster/api.ts";
import { startBundleServer } from "../../../src/kube/bundle/bundle-server.ts";
import { BundleStore } from "../../../src/kube/bundle/bundle-store.ts";
import { type EnsureImageInput, ImageBuilder, type ImageBuilderOptions } from "../../../src/kube/build/image-build.ts";
import { createLogger } from "../../../src/log.ts";
import type { SimulatedCluster } from "../../../src/sim/index.ts";

export const BUILD_NAMESPACE = "telo-builds";
export const MANAGED_BY = "telo-k8s-runner";

export function buildConfig(overrides: Partial<BuildConfig> = {}): BuildConfig {
  return {
    repository: "registry.example.com/telo/sessions",
    namespace: BUILD_NAMESPACE,
    builderImage: "gcr.io/kaniko-project/executor:latest",
    timeoutSeconds: 600,
    insecureRegistry: false,
    registryApiUrl: undefined,
    pushSecret: undefined,
    ...overrides,
  };
}

/** An application importing `imports`: the imports are what the image tag depends on. */
export function appBundle(imports: Record<string, string>, body = "hello"): RunBundle {
  const importLines = Object.entries(imports).map(([name, source]) => `  ${name}: ${source}`);
  const manifest = [
    "kind: Telo.Application",
    "metadata:",
    "  name: demo",
    ...(importLines.length > 0 ? ["imports:", ...importLines] : []),
    "---",
    "kind: Console.WriteLine",
    `output: ${body}`,
    "",
  ].join("\n");
  return { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: manifest }] };
}

export function ensureInput(bundle: RunBundle, overrides: Partial<EnsureImageInput> = {}): EnsureImageInput {
  return {
    sessionId: "k7m3qx4r2abc",
    app: "app",
    bundle,
    baseImage: "telorun/node:0.14.0-slim",
    pullPolicy: "missing",
    entryRelativePath: bundle.entryRelativePath,
    ...overrides,
  };
}

/** A real BundleStore that also remembers what was staged, so a test can read the build context. */
export class RecordingBundleStore extends BundleStore {
  readonly staged: Array<{ id: string; archive: Buffer; url: string }> = [];

  override stage(id: string, archive: Buffer): string {
    const url = super.stage(id, archive);
    this.staged.push({ id, archive, url });
    return url;
  }
}

/** The files of a staged gzip'd ustar archive, by name. */
export function archiveFiles(archive: Buffer): Map<string, string> {
  const tar = gunzipSync(archive);
  const files = new Map<string, string>();
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    const name = header.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "");
    if (name === "") break;
    const size = Number.parseInt(header.subarray(124, 136).toString("ascii").replace(/\0.*$/s, ""), 8);
    files.set(name, tar.subarray(offset + 512, offset + 512 + size).toString("utf8"));
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

export type Progress = Array<{ message: string; done?: boolean }>;

/** Collects build progress in order, as the run session would forward it. */
export function progressRecorder(): { progress: Progress; onProgress: (message: string, done?: boolean) => void } {
  const progress: Progress = [];
  return {
    progress,
    onProgress: (message, done) => progress.push(done === undefined ? { message } : { message, done }),
  };
}

/** Every builder's store of this test process, as the one bundle listener below serves them. */
const liveStores = new Set<BundleStore>();

class AnyLiveStore extends BundleStore {
  override take(id: string, token: string | undefined): Buffer | undefined {
    for (const store of liveStores) {
      const archive = store.take(id, token);
      if (archive) return archive;
    }
    return undefined;
  }
}

/**
 * The build pod's context-fetch really downloads its archive on the simulated cluster (its
 * shell expands "$ARCHIVE_URL"), so the context is served as the supervisor serves it; unref'd,
 * it lives as long as the test process.
 */
const listener = await startBundleServer(new AnyLiveStore(""), 0, "127.0.0.1");
listener.server.unref();

export function newBuilder(
  cluster: SimulatedCluster,
  build: BuildConfig,
  extra: Partial<ImageBuilderOptions> = {},
): { builder: ImageBuilder; bundles: RecordingBundleStore } {
  const bundles = new RecordingBundleStore(`http://127.0.0.1:${listener.port}`);
  liveStores.add(bundles);
  const builder = new ImageBuilder({
    api: kubeApi(cluster.kubeConfig()),
    build,
    bundles,
    log: createLogger("image-build-test", "silent"),
    stamp: { managedBy: MANAGED_BY, ownerId: "default" },
    initImage: "busybox:stable",
    pollMs: 20,
    ...extra,
  });
  return { builder, bundles };
}
