/**
 * The runner installed in the real cluster as operators install it: its image built by
 * `npm run image`'s code from this checkout and imported into the node's containerd, then
 * `kubectl apply -k` of an overlay over k8s/base, or `helm install` of k8s/chart. Only image
 * references change: the runner's own, and the session and init images the cluster can start
 * (the tier's local stand-ins; the published ones cannot be pulled here). The tests reach the
 * runner through its Service's ClusterIP, which the node routes through kube-proxy.
 */
import { execFile } from "node:child_process";
import { get as httpGet } from "node:http";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import { buildRunner } from "../../../src/release/build.ts";
import { buildImage } from "../../../src/release/image.ts";
import { helmBinary, RELEASE, RELEASE_NAMESPACE } from "../../deploy/helm.ts";
import { REPO_ROOT } from "../../deploy/render.ts";
import { waitFor } from "../../support/wait.ts";
import { RUNNER_NAMESPACE } from "../fixture/cluster.ts";
import { dnsKnows, kubectl } from "../pods.ts";

const run = promisify(execFile);
const WORK = join(REPO_ROOT, ".tmp", "incluster");
export const RUNNER_REPOSITORY = "k8s-runner.local/k8s-runner";

const ctr = (args: string[]) => run("ctr", [`--address=${inject("realCluster").containerdSocket}`, "--namespace=k8s.io", ...args], { maxBuffer: 16 << 20 });

/** The runner's image from this checkout, imported under `tag`; the archive's digest returned. */
export async function importRunnerImage(tag: string): Promise<{ ref: string; digest: string; bytes: number }> {
  const distDir = join(WORK, "dist");
  await rm(distDir, { recursive: true, force: true });
  await buildRunner({ root: REPO_ROOT, outDir: distDir, sourceMaps: true }, true);
  const ref = `${RUNNER_REPOSITORY}:${tag}`;
  const image = await buildImage({ root: REPO_ROOT, distDir, nodeBinary: process.execPath, ref, sessionImage: inject("realCluster").kernelImage, version: tag });
  const file = join(WORK, `runner-${tag}.tar`);
  await writeFile(file, image.archive);
  await ctr(["images", "import", file]);
  return { ref, digest: image.digest, bytes: image.archive.length };
}

/** A second name for an imported image: what a new tag of the same build looks like to the node. */
export async function tagImage(from: string, to: string): Promise<void> {
  await ctr(["images", "tag", "--force", from, to]);
}

/**
 * `kubectl apply -k` of an overlay over k8s/base that changes image references and the replica
 * count only (one by default, on this single node; the replicas' file asks for k8s/base's three):
 * the runner's own, and the init image the session pods fetch their bundle with (the kernel
 * image is the one baked into the runner's image, RUNNER_IMAGE, as a release build sets it).
 * `env` adds settings to the runner's ConfigMap (the replicas' file lowers the session ceilings
 * so that its sessions fit the node beside four runner pods).
 */
export async function applyOverlay(tag: string, options: { replicas?: number; env?: Record<string, string> } = {}): Promise<string> {
  const { replicas = 1, env = {} } = options;
  const dir = join(WORK, "overlay");
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      "resources:",
      `  - ${relative(dir, join(REPO_ROOT, "k8s/base"))}`,
      // The replica settings stay as k8s/base has them, whatever the count.
      "replicas:",
      "  - name: telo-k8s-runner",
      `    count: ${replicas}`,
      "images:",
      "  - name: telorun/k8s-runner",
      `    newName: ${RUNNER_REPOSITORY}`,
      `    newTag: "${tag}"`,
      "configMapGenerator:",
      "  - name: telo-k8s-runner-env",
      "    namespace: telo-runner",
      "    behavior: merge",
      "    literals:",
      `      - RUNNER_INIT_IMAGE=${inject("realCluster").initImage}`,
      ...Object.entries(env).map(([name, value]) => `      - ${name}=${value}`),
      "",
    ].join("\n"),
  );
  await kubectl(["apply", "-k", dir]);
  return dir;
}

/**
 * The chart's values for the helm install: the same image references, and the features an
 * operator turns on through values (watch sessions, a predefined app, a warm pool of one, the
 * console), so their in-cluster checks run. The app's image is the kernel stand-in, whose
 * entrypoint without arguments echoes its terminal.
 */
export function helmValues(tag: string, more: { env?: Record<string, string>; quota?: Record<string, string> } = {}): object {
  const real = inject("realCluster");
  return {
    // k8s/base's session namespace (the chart's own default is <fullname>-sessions), so the
    // checks shared with the kustomize install find the session pods where they look.
    sessionNamespace: "telo-sessions",
    // The chart's single-replica install, the one where the warm pool runs.
    replicas: 1,
    image: { repository: RUNNER_REPOSITORY, tag },
    env: { RUNNER_INIT_IMAGE: real.initImage, RUNNER_CONSOLE: "true", RUNNER_WARM_POOL_SIZE: "1", ...more.env },
    ...(more.quota ? { quota: more.quota } : {}),
    watch: { enabled: true },
    appsCatalog: { enabled: true, catalog: JSON.stringify({ echo: { image: real.kernelImage, pullPolicy: "missing" } }) },
  };
}

/** `helm install` (or upgrade) of k8s/chart with `helmValues`, as the release k8s/base's names belong to. */
export async function helmInstall(tag: string, verb: "install" | "upgrade" = "install", more: Parameters<typeof helmValues>[1] = {}): Promise<void> {
  await mkdir(WORK, { recursive: true });
  const values = join(WORK, `values-${tag}.json`);
  await writeFile(values, JSON.stringify(helmValues(tag, more)));
  await helm([verb, RELEASE, "k8s/chart", "--namespace", RELEASE_NAMESPACE, "--create-namespace", "-f", values]);
}

/** helm against the tier's cluster as its admin; stdout. */
export async function helm(args: string[]): Promise<string> {
  const { stdout } = await run(helmBinary(), [...args, `--kubeconfig=${inject("realCluster").adminKubeconfig}`], { cwd: REPO_ROOT });
  return stdout;
}

export type RunnerPod = { name: string; ip: string; ready: boolean; restarts: Record<string, number>; images: Record<string, string> };

type PodList = {
  items: Array<{
    metadata: { name: string; deletionTimestamp?: string };
    spec: { containers: Array<{ name: string; image: string }> };
    status: { podIP?: string; conditions?: Array<{ type: string; status: string }>; containerStatuses?: Array<{ name: string; restartCount: number; ready: boolean }> };
  }>;
};

/** The runner's pods, those being deleted only when `terminating` says so. */
export async function runnerPods(options: { terminating?: boolean } = {}): Promise<RunnerPod[]> {
  const list = JSON.parse(await kubectl(["-n", RUNNER_NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=telo-k8s-runner", "-o", "json"])) as PodList;
  return list.items
    .filter((pod) => options.terminating === true || !pod.metadata.deletionTimestamp)
    .map((pod) => ({
      name: pod.metadata.name,
      ip: pod.status.podIP ?? "",
      ready: pod.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
      restarts: Object.fromEntries((pod.status.containerStatuses ?? []).map((c) => [c.name, c.restartCount])),
      images: Object.fromEntries(pod.spec.containers.map((c) => [c.name, c.image])),
    }));
}

/** The one runner pod, Ready, running `ref` in both containers. */
export async function readyRunner(ref: string): Promise<RunnerPod> {
  return (await readyRunners(ref, 1))[0]!;
}

/** Exactly `count` runner pods, every one Ready and running `ref` in both containers. */
export async function readyRunners(ref: string, count: number): Promise<RunnerPod[]> {
  return waitFor(`${count} runner pod(s) on ${ref} to be Ready`, async () => {
    const pods = await runnerPods();
    return pods.length === count && pods.every((pod) => pod.ready && Object.values(pod.images).every((image) => image === ref)) ? pods : undefined;
  }, 240_000);
}

/** GET /v1/ready through `baseUrl` on a connection of its own; true for a 200 within a second. */
export function readyOnNewConnection(baseUrl: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = httpGet(`${baseUrl}/v1/ready`, { agent: false, timeout: 1_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve(false));
  });
}

/**
 * Waits until the Service answers /v1/ready on a new connection. A pod's endpoint joins the
 * Service a moment after the pod turns Ready (the EndpointSlice, then the node's proxy); until
 * then a new connection is refused, so every wait for a new or restarted pod ends with this.
 */
export async function servedThroughService(baseUrl: string): Promise<void> {
  await waitFor("the Service to reach a Ready runner pod", () => readyOnNewConnection(baseUrl), 60_000);
}

/** The Service's ClusterIP URL for a port name (`http` the /v1 API, `bundles` the bundle listener), once it serves. */
export async function serviceUrl(port: "http" | "bundles"): Promise<string> {
  const service = JSON.parse(await kubectl(["-n", RUNNER_NAMESPACE, "get", "service", "telo-k8s-runner", "-o", "json"])) as {
    spec: { clusterIP: string; ports: Array<{ name: string; port: number }> };
  };
  // RUNNER_SELF_URL names the Service: the session pods need the cluster DNS to know it.
  await dnsKnows("telo-k8s-runner.telo-runner.svc.cluster.local", service.spec.clusterIP);
  const urlOf = (name: string) => `http://${service.spec.clusterIP}:${service.spec.ports.find((p) => p.name === name)!.port}`;
  await servedThroughService(urlOf("http"));
  return urlOf(port);
}

/** Everything the install made, namespaces included, gone; the next install starts clean. */
export async function uninstall(how: { overlay: string } | { helm: true }): Promise<void> {
  // The runner first, so that nothing it calls is refused while its RoleBinding goes (the tier's
  // audit holds its ServiceAccount to no 403).
  await kubectl(["-n", RUNNER_NAMESPACE, "scale", "deployment/telo-k8s-runner", "--replicas=0"]).catch(() => undefined);
  const left = () => kubectl(["-n", RUNNER_NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=telo-k8s-runner", "-o", "name"]).catch(() => "");
  await waitFor("the runner pod to be gone, terminating ones included", async () => (await left()).trim() === "" || undefined, 120_000);
  if ("overlay" in how) await kubectl(["delete", "-k", how.overlay, "--wait=true", "--ignore-not-found"]);
  else {
    await helm(["uninstall", RELEASE, "--namespace", RELEASE_NAMESPACE, "--wait"]);
    // The release's namespace is --create-namespace's, which helm uninstall leaves.
    await kubectl(["delete", "namespace", RELEASE_NAMESPACE, "--wait=true", "--ignore-not-found"]);
  }
  await waitFor("the runner's namespaces to be gone", async () => {
    const out = await kubectl(["get", "namespaces", "-o", "jsonpath={.items[*].metadata.name}"]);
    return !/\btelo-(runner|sessions)\b/.test(out) || undefined;
  }, 180_000);
}
