// coordination.k8s.io/v1 Leases as the apiserver serves them, through client-node and kubectl:
// the verbs, the optimistic lock (409 on a stale write), the Lease registry's update policy, its
// validation and MicroTime decoding, namespacing, watch and printing. The same file runs against
// the real apiserver in `npm run test:cluster`, so each expectation is the apiserver's own.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoordinationV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, Watch, type V1Lease } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startSimulatedCluster, type SimulatedCluster } from "../../src/sim/index.ts";
import { statusOf } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const ON_REAL_CLUSTER = process.env.K8S_RUNNER_TEST_CLUSTER === "real";
let sim: SimulatedCluster | undefined;
let kubeconfigPath = "";
let kc: KubeConfig;
let leases: CoordinationV1Api;
let core: CoreV1Api;
let cacheDir = "";

beforeAll(async () => {
  if (ON_REAL_CLUSTER) kubeconfigPath = inject("realCluster").adminKubeconfig;
  else {
    sim = await startSimulatedCluster({ podStartDelayMs: 20 });
    kubeconfigPath = sim.kubeconfigPath;
  }
  kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  leases = kc.makeApiClient(CoordinationV1Api);
  core = kc.makeApiClient(CoreV1Api);
  cacheDir = await mkdtemp(join(tmpdir(), "lease-kubectl-cache-"));
});
afterAll(async () => {
  await sim?.stop();
  await rm(cacheDir, { recursive: true, force: true });
});

let counter = 0;
async function namespace(): Promise<string> {
  const name = `leases-${Date.now().toString(36)}-${counter++}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

function lease(name: string, spec: Record<string, unknown> = {}): V1Lease {
  return { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name }, spec: { holderIdentity: "a", leaseDurationSeconds: 15, ...spec } } as V1Lease;
}

function kubectl(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile("kubectl", [`--kubeconfig=${kubeconfigPath}`, `--cache-dir=${cacheDir}`, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === "ENOENT") reject(new Error("kubectl is not installed: these tests need it"));
      else resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

describe("Lease verbs", () => {
  it("creates, reads, lists, replaces, patches and deletes a Lease in its namespace", async () => {
    const ns = await namespace();
    const created = await leases.createNamespacedLease({ namespace: ns, body: lease("one") });
    expect(created.metadata?.resourceVersion).toBeTruthy();
    expect(created.spec?.holderIdentity).toBe("a");
    expect((await leases.readNamespacedLease({ namespace: ns, name: "one" })).metadata?.uid).toBe(created.metadata?.uid);

    const replaced = await leases.replaceNamespacedLease({ namespace: ns, name: "one", body: { ...created, spec: { ...created.spec, holderIdentity: "b", leaseTransitions: 1 } } });
    expect(replaced.spec?.holderIdentity).toBe("b");
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));

    const patched = await leases.patchNamespacedLease(
      { namespace: ns, name: "one", body: { spec: { holderIdentity: null } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    expect(patched.spec?.holderIdentity).toBeUndefined();
    expect(patched.spec?.leaseTransitions).toBe(1);

    const other = await namespace();
    expect((await leases.listNamespacedLease({ namespace: other })).items).toEqual([]);
    expect((await leases.listNamespacedLease({ namespace: ns })).items.map((l) => l.metadata?.name)).toEqual(["one"]);

    const status = await leases.deleteNamespacedLease({ namespace: ns, name: "one" });
    expect(status).toMatchObject({ kind: "Status", status: "Success", details: { name: "one", group: "coordination.k8s.io", kind: "leases" } });
    expect(await statusOf(leases.readNamespacedLease({ namespace: ns, name: "one" }))).toMatchObject({
      code: 404,
      reason: "NotFound",
      message: 'leases.coordination.k8s.io "one" not found',
    });
  });

  it("refuses a second create with 409 AlreadyExists and a Lease in a missing namespace with 404", async () => {
    const ns = await namespace();
    await leases.createNamespacedLease({ namespace: ns, body: lease("dup") });
    expect(await statusOf(leases.createNamespacedLease({ namespace: ns, body: lease("dup") }))).toMatchObject({ code: 409, reason: "AlreadyExists" });
    expect(await statusOf(leases.createNamespacedLease({ namespace: `${ns}-absent`, body: lease("x") }))).toMatchObject({ code: 404, reason: "NotFound" });
  });
});

describe("the optimistic lock", () => {
  it("answers a replace carrying a stale resourceVersion with 409 Conflict: exactly one of two racing writers wins", async () => {
    const ns = await namespace();
    const seen = await leases.createNamespacedLease({ namespace: ns, body: lease("race") });
    const bodyFor = (holder: string) => ({ ...seen, spec: { ...seen.spec, holderIdentity: holder } });
    const results = await Promise.allSettled([
      leases.replaceNamespacedLease({ namespace: ns, name: "race", body: bodyFor("x") }),
      leases.replaceNamespacedLease({ namespace: ns, name: "race", body: bodyFor("y") }),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected")!;
    expect(await statusOf(Promise.reject(lost.reason))).toMatchObject({
      code: 409,
      reason: "Conflict",
      message: 'Operation cannot be fulfilled on leases.coordination.k8s.io "race": the object has been modified; please apply your changes to the latest version and try again',
    });
    const holder = (await leases.readNamespacedLease({ namespace: ns, name: "race" })).spec?.holderIdentity;
    expect(holder).toBe((won[0] as PromiseFulfilledResult<V1Lease>).value.spec?.holderIdentity);
  });

  it("refuses a replace without a resourceVersion (the Lease registry allows no unconditional update)", async () => {
    const ns = await namespace();
    await leases.createNamespacedLease({ namespace: ns, body: lease("plain") });
    expect(await statusOf(leases.replaceNamespacedLease({ namespace: ns, name: "plain", body: lease("plain", { holderIdentity: "b" }) }))).toMatchObject({
      code: 422,
      reason: "Invalid",
      message: 'leases.coordination.k8s.io "plain" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
    });
  });

  it("creates a Lease on a replace of one that does not exist (201)", async () => {
    const ns = await namespace();
    const made = await leases.replaceNamespacedLeaseWithHttpInfo({ namespace: ns, name: "fresh", body: lease("fresh") });
    expect(made.httpStatusCode).toBe(201);
    expect(made.data.spec?.holderIdentity).toBe("a");
  });

  it("honours a resourceVersion precondition on delete", async () => {
    const ns = await namespace();
    const first = await leases.createNamespacedLease({ namespace: ns, body: lease("pre") });
    await leases.replaceNamespacedLease({ namespace: ns, name: "pre", body: { ...first, spec: { ...first.spec, holderIdentity: "b" } } });
    expect(await statusOf(leases.deleteNamespacedLease({ namespace: ns, name: "pre", body: { preconditions: { resourceVersion: first.metadata!.resourceVersion! } } }))).toMatchObject({ code: 409, reason: "Conflict" });
  });
});

describe("validation and decoding", () => {
  it("refuses a non-positive leaseDurationSeconds, a negative leaseTransitions and a bad name with 422", async () => {
    const ns = await namespace();
    expect(await statusOf(leases.createNamespacedLease({ namespace: ns, body: lease("zero", { leaseDurationSeconds: 0, leaseTransitions: -1 }) }))).toMatchObject({
      code: 422,
      reason: "Invalid",
      message: 'Lease.coordination.k8s.io "zero" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]',
    });
    expect(await statusOf(leases.createNamespacedLease({ namespace: ns, body: lease("Not_A_Name") }))).toMatchObject({ code: 422, reason: "Invalid" });
  });

  it("stores MicroTimes in UTC with six fractional digits and refuses one with three (400)", async () => {
    const ns = await namespace();
    const made = await leases.createNamespacedLease({ namespace: ns, body: lease("micro", { renewTime: "2026-12-01T22:52:39.123456+02:00", acquireTime: "2026-12-01T20:52:39.000001Z" }) });
    expect(made.spec?.renewTime).toBe("2026-12-01T20:52:39.123456Z");
    expect(made.spec?.acquireTime).toBe("2026-12-01T20:52:39.000001Z");
    expect(await statusOf(leases.createNamespacedLease({ namespace: ns, body: lease("milli", { renewTime: "2026-12-01T20:52:39.123Z" }) }))).toMatchObject({
      code: 400,
      reason: "BadRequest",
      message: 'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-12-01T20:52:39.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    });
  });

  it("drops the coordinated-leader-election fields while that feature is off", async () => {
    const ns = await namespace();
    const made = await leases.createNamespacedLease({ namespace: ns, body: lease("cle", { strategy: "OldestEmulationVersion", preferredHolder: "b" }) });
    expect(made.spec?.strategy).toBeUndefined();
    expect(made.spec?.preferredHolder).toBeUndefined();
  });
});

describe("watch and kubectl", () => {
  it("streams ADDED, MODIFIED and DELETED for the namespace's Leases", async () => {
    const ns = await namespace();
    const events: string[] = [];
    const request = await new Watch(kc).watch(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, {}, (type, obj: V1Lease) => {
      events.push(`${type} ${obj.metadata?.name} ${obj.spec?.holderIdentity ?? "-"}`);
    }, () => undefined);
    try {
      const made = await leases.createNamespacedLease({ namespace: ns, body: lease("w") });
      await leases.replaceNamespacedLease({ namespace: ns, name: "w", body: { ...made, spec: { ...made.spec, holderIdentity: "b" } } });
      await leases.deleteNamespacedLease({ namespace: ns, name: "w" });
      await waitFor("three watch events", () => events.length >= 3);
      expect(events).toEqual(["ADDED w a", "MODIFIED w b", "DELETED w b"]);
    } finally {
      request.abort();
    }
  });

  it("kubectl applies a Lease and prints it with its holder", async () => {
    const ns = await namespace();
    const manifest = `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: printed, namespace: ${ns}}\nspec: {holderIdentity: replica-1, leaseDurationSeconds: 15}\n`;
    const applied = await kubectl(["apply", "-f", "-"], manifest);
    expect(applied.stderr).toBe("");
    expect(applied.stdout.trim()).toBe("lease.coordination.k8s.io/printed created");
    const got = await kubectl(["get", "leases", "-n", ns]);
    expect(got.code).toBe(0);
    expect(got.stdout.split("\n")[0]).toMatch(/^NAME\s+HOLDER\s+AGE$/);
    expect(got.stdout.split("\n")[1]).toMatch(/^printed\s+replica-1\s+\d+s$/);
    const resources = await kubectl(["api-resources", "--api-group=coordination.k8s.io", "--no-headers"]);
    expect(resources.stdout).toMatch(/^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m);
  });
});
