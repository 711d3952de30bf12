// Where a simulator is most easily wrong: behaviours of the real v1.36 apiserver and kubelet
// (what a real cluster run showed a simulator may get wrong), each
// held here so the runner's tests meet them on the simulated cluster too.
import { Attach, Exec, NodeV1Api, Watch, type V1Status } from "@kubernetes/client-node";
import { PassThrough, Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { bundleArchive } from "../../src/kube/bundle/bundle-archive.ts";
import { startBundleServer } from "../../src/kube/bundle/bundle-server.ts";
import { BundleStore } from "../../src/kube/bundle/bundle-store.ts";
import { kubeApi } from "../../src/kube/cluster/api.ts";
import { PodWatcher } from "../../src/kube/cluster/pod-watcher.ts";
import { runPod } from "../../src/kube/specs/run-pod.ts";
import { createLogger } from "../../src/log.ts";
import { PLAIN_SETTINGS, RUN_LIMITS, runSession, SESSION_ID } from "../kube/fixtures.ts";
import { waitFor } from "../support/wait.ts";
import { freshNamespace, pod, statusOf, useCluster } from "./helpers.ts";

const c = useCluster({ namespaces: [PLAIN_SETTINGS.namespace] });

/** Runs `command` in a container over the exec WebSocket; its output and exit status. */
async function exec(namespace: string, name: string, container: string, command: string[]): Promise<{ stdout: string; stderr: string; status: V1Status }> {
  const out = { stdout: "", stderr: "" };
  const sink = (key: keyof typeof out) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        out[key] += chunk.toString("utf8");
        done();
      },
    });
  const status = await new Promise<V1Status>((resolve, reject) => {
    new Exec(c.kc).exec(namespace, name, container, command, sink("stdout"), sink("stderr"), null, false, resolve).catch(reject);
  });
  return { ...out, status };
}

describe("bundle delivery through the runner's body-fetch", () => {
  const store = new BundleStore("");
  let bundles: Awaited<ReturnType<typeof startBundleServer>> | undefined;
  afterAll(() => bundles?.close());

  it("expands \"$ARCHIVE_URL\", spends the single-use token, and unpacks the bundle where the session container reads it", async () => {
    bundles = await startBundleServer(store, 0, "127.0.0.1");
    const files = [
      { relativePath: "telo.yaml", contents: "kind: Telo.Application\nname: hello\n" },
      { relativePath: "lib/notes.txt", contents: Buffer.from("nested\n").toString("base64"), encoding: "base64" as const },
    ];
    const bundleUrl = `http://127.0.0.1:${bundles.port}${store.stage(SESSION_ID, await bundleArchive(files))}`;
    const body = runPod({ session: runSession(), env: {}, settings: PLAIN_SETTINGS, limits: RUN_LIMITS, defaultImage: "telorun/node:latest-slim", bundleUrl });
    const ns = PLAIN_SETTINGS.namespace;
    const name = body.metadata!.name!;
    await c.core.createNamespacedPod({ namespace: ns, body });
    await waitFor("running", async () => (await c.core.readNamespacedPod({ name, namespace: ns })).status?.phase === "Running");

    const fetch0 = (await c.core.readNamespacedPod({ name, namespace: ns })).status?.initContainerStatuses?.[0]?.state?.terminated;
    expect(fetch0).toMatchObject({ exitCode: 0, reason: "Completed" });
    // the token was used up by the download: the URL now answers 404, the store holds nothing
    expect(store.size).toBe(0);
    expect((await fetch(bundleUrl)).status).toBe(404);

    // the session container (read-only root, the app volume at /app) sees the files
    const yaml = await exec(ns, name, "session", ["cat", "/app/telo.yaml"]);
    expect(yaml).toEqual({ stdout: "kind: Telo.Application\nname: hello\n", stderr: "", status: { metadata: {}, status: "Success" } });
    expect((await exec(ns, name, "session", ["cat", "/app/lib/notes.txt"])).stdout).toBe("nested\n");
    const missing = await exec(ns, name, "session", ["cat", "/app/nope.yaml"]);
    expect(missing.stderr).toBe("cat: can't open '/app/nope.yaml': No such file or directory\n");
    expect(missing.status.reason).toBe("NonZeroExitCode");
    // the archive stays in the tmp volume both containers mount; the root filesystem is read-only
    const again = await exec(ns, name, "session", ["sh", "-c", "tar xzf /tmp/archive.tgz -C /opt"]);
    expect(again.stderr).toBe("tar: can't open 'telo.yaml': Read-only file system\n");
  });
});

describe("RuntimeClass", () => {
  it("serves node.k8s.io/v1 runtimeclasses and refuses a pod naming a missing one with the plugin's 403", async () => {
    const node = c.kc.makeApiClient(NodeV1Api);
    const ns = await freshNamespace(c);
    await node.createRuntimeClass({ body: { metadata: { name: "gvisor" }, handler: "runsc" } });
    expect((await node.listRuntimeClass()).items.map((r) => [r.metadata?.name, r.handler])).toEqual([["gvisor", "runsc"]]);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("sandboxed", { spec: { runtimeClassName: "gvisor" } }) });

    // refused before validation, as the mutating plugin refuses it: the bad image does not matter
    const refused = await statusOf(c.core.createNamespacedPod({ namespace: ns, body: pod("kata", { spec: { runtimeClassName: "kata" }, container: { image: "" } }) }));
    expect(refused).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'pods "kata" is forbidden: pod rejected: RuntimeClass "kata" not found',
      reason: "Forbidden",
      details: { name: "kata", kind: "pods" },
      code: 403,
    });
    const missingHandler = await statusOf(node.createRuntimeClass({ body: { metadata: { name: "bad" } } as never }));
    expect(missingHandler.code).toBe(422);
  });
});

describe("authorization of streaming subresources", () => {
  it("records a WebSocket attach as the apiserver authorizes it: get and create on pods/attach", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("tty", { container: { stdin: true, tty: true } }) });
    await waitFor("running", async () => (await c.core.readNamespacedPod({ name: "tty", namespace: ns })).status?.phase === "Running");
    c.cluster.resetCounters();
    const ws = await new Attach(c.kc).attach(ns, "tty", "main", new PassThrough(), null, new PassThrough(), true);
    ws.close();
    expect(c.cluster.recordedRequests()).toEqual([
      { verb: "get", apiGroup: "", resource: "pods", subresource: "attach", namespace: ns },
      { verb: "create", apiGroup: "", resource: "pods", subresource: "attach", namespace: ns },
    ]);
    // the request itself is counted once, by its own verb
    expect(c.cluster.counters().requests).toEqual({ "get pods/attach": 1 });
  });
});

describe("validation the schema cannot express", () => {
  it("refuses ConfigMap keys that cannot be file names, and a Service without ports, with 422", async () => {
    const ns = await freshNamespace(c);
    const key = await statusOf(c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "cm" }, data: { "bad key!": "x", "good.key": "y" } } }));
    expect(key.code).toBe(422);
    expect(key.reason).toBe("Invalid");
    expect(key.message).toBe(
      `ConfigMap "cm" is invalid: data[bad key!]: Invalid value: "bad key!": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
    );
    expect(key.details?.causes).toEqual([{ field: "data[bad key!]", reason: "FieldValueInvalid", message: expect.stringMatching(/^Invalid value: "bad key!": a valid config key/) }]);
    expect((await statusOf(c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "dots" }, data: { "..x": "" } } }))).message).toBe(
      `ConfigMap "dots" is invalid: data[..x]: Invalid value: "..x": must not start with '..'`,
    );

    const portless = await statusOf(c.core.createNamespacedService({ namespace: ns, body: { metadata: { name: "svc" }, spec: { selector: { app: "x" } } } }));
    expect(portless.code).toBe(422);
    expect(portless.message).toBe('Service "svc" is invalid: spec.ports: Required value');
    expect(portless.details?.causes).toEqual([{ field: "spec.ports", reason: "FieldValueRequired", message: "Required value" }]);
    // a headless Service may have none
    await c.core.createNamespacedService({ namespace: ns, body: { metadata: { name: "headless" }, spec: { clusterIP: "None", selector: { app: "x" } } } });
  });
});

describe("messages worded as the apiserver words them", () => {
  it("names every container a quota's compute is missing from, init containers included", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedResourceQuota({ namespace: ns, body: { metadata: { name: "compute" }, spec: { hard: { "limits.cpu": "2", "requests.memory": "1Gi", "limits.ephemeral-storage": "1Gi" } } } });
    const refused = await statusOf(
      c.core.createNamespacedPod({
        namespace: ns,
        body: pod("p", { spec: { initContainers: [{ name: "fetch", image: "busybox", resources: { limits: { cpu: "100m" } } }] }, container: { resources: { requests: { memory: "64Mi" } } } }),
      }),
    );
    // ephemeral-storage is never obligatory; cpu limits imply cpu requests, not memory ones
    expect(refused).toMatchObject({ code: 403, reason: "Forbidden", message: 'pods "p" is forbidden: failed quota: compute: must specify limits.cpu for: main; requests.memory for: fetch' });
  });

  it("reports container names as ValidatePodSpec does: each rule apart, a clash on the init container", async () => {
    const ns = await freshNamespace(c);
    const bad = await statusOf(
      c.core.createNamespacedPod({
        namespace: ns,
        body: { metadata: { name: "p" }, spec: { initContainers: [{ name: "main", image: "x" }], containers: [{ name: "main", image: "x" }, { name: "a.b", image: "x" }, { name: `${"x".repeat(64)}`, image: "x" }] } },
      }),
    );
    expect(bad.code).toBe(422);
    expect(bad.details?.causes).toEqual([
      { field: "spec.containers[1].name", reason: "FieldValueInvalid", message: 'Invalid value: "a.b": must not contain dots' },
      { field: "spec.containers[2].name", reason: "FieldValueInvalid", message: `Invalid value: "${"x".repeat(64)}": must be no more than 63 characters` },
      { field: "spec.initContainers[0].name", reason: "FieldValueDuplicate", message: 'Duplicate value: "main"' },
    ]);
  });

  it("refuses a bad label selector with apimachinery's parse error", async () => {
    const ns = await freshNamespace(c);
    const key = await statusOf(c.core.listNamespacedPod({ namespace: ns, labelSelector: "-app=x" }));
    expect(key).toMatchObject({
      code: 400,
      reason: "BadRequest",
      message: `unable to parse requirement: <nil>: Invalid value: "-app": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    });
    const value = await statusOf(c.core.listNamespacedPod({ namespace: ns, labelSelector: "app in (ok,-bad)" }));
    expect(value.message).toBe(
      `unable to parse requirement: [app]: Invalid value: "-bad": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
    const prefix = await statusOf(c.core.listNamespacedPod({ namespace: ns, labelSelector: "Example.com/app" }));
    expect(prefix.message).toMatch(/^unable to parse requirement: <nil>: Invalid value: "Example.com\/app": prefix part a lowercase RFC 1123 subdomain must consist of /);
  });
});

describe("defaults", () => {
  const TOLERATIONS = [
    { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
  ];

  it("adds the not-ready and unreachable tolerations unless the pod has its own", async () => {
    const ns = await freshNamespace(c);
    const plain = await c.core.createNamespacedPod({ namespace: ns, body: pod("plain") });
    expect(plain.spec?.tolerations).toEqual(TOLERATIONS);
    const own = { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 10 };
    const custom = await c.core.createNamespacedPod({ namespace: ns, body: pod("custom", { spec: { tolerations: [own] } }) });
    expect(custom.spec?.tolerations).toEqual([own, TOLERATIONS[0]]);
    // a toleration of every taint covers both
    const all = await c.core.createNamespacedPod({ namespace: ns, body: pod("all", { spec: { tolerations: [{ operator: "Exists" }] } }) });
    expect(all.spec?.tolerations).toEqual([{ operator: "Exists" }]);
  });

  it("keeps metadata.generation: 1 on create, bumped by a spec change and by graceful deletion, observed by the kubelet", async () => {
    const ns = await freshNamespace(c);
    const created = await c.core.createNamespacedPod({ namespace: ns, body: pod("gen", { container: { stdin: true } }) });
    expect(created.metadata?.generation).toBe(1);
    await waitFor("observed", async () => (await c.core.readNamespacedPod({ name: "gen", namespace: ns })).status?.observedGeneration === 1);
    const labelled = await c.core.patchNamespacedPod({ name: "gen", namespace: ns, body: [{ op: "add", path: "/metadata/labels/x", value: "y" }] });
    expect(labelled.metadata?.generation).toBe(1);
    const deadline = await c.core.patchNamespacedPod({ name: "gen", namespace: ns, body: [{ op: "add", path: "/spec/activeDeadlineSeconds", value: 600 }] });
    expect(deadline.metadata?.generation).toBe(2);
    const deleting = await c.core.deleteNamespacedPod({ name: "gen", namespace: ns });
    expect(deleting.metadata?.deletionTimestamp).toBeDefined();
    expect(deleting.metadata?.generation).toBe(3);
    // other kinds without generation keep none
    const svc = await c.core.createNamespacedService({ namespace: ns, body: { metadata: { name: "svc" }, spec: { ports: [{ port: 80 }] } } });
    expect(svc.metadata?.generation).toBeUndefined();
  });

  it("merges a Secret's stringData into data on create and replace, and never stores it", async () => {
    const ns = await freshNamespace(c);
    const created = await c.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: "s" }, data: { a: "eA==", b: "eA==" }, stringData: { b: "two", c: "three" } } });
    expect(created.data).toEqual({ a: "eA==", b: Buffer.from("two").toString("base64"), c: Buffer.from("three").toString("base64") });
    expect(created.stringData).toBeUndefined();
    const replaced = await c.core.replaceNamespacedSecret({ name: "s", namespace: ns, body: { metadata: { name: "s" }, stringData: { d: "four" } } });
    expect(replaced.data).toEqual({ d: Buffer.from("four").toString("base64") });
    const badKey = await statusOf(c.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: "bad" }, stringData: { "no/slash": "x" } } }));
    expect(badKey.details?.causes).toEqual([{ field: "data[no/slash]", reason: "FieldValueInvalid", message: expect.stringMatching(/^Invalid value: "no\/slash": a valid config key/) }]);
  });

  it("fills a Service's ipFamilies, ipFamilyPolicy and internalTrafficPolicy, and keeps them across a replace", async () => {
    const ns = await freshNamespace(c);
    const svc = await c.core.createNamespacedService({ namespace: ns, body: { metadata: { name: "svc" }, spec: { ports: [{ port: 80 }] } } });
    expect(svc.spec).toMatchObject({ ipFamilies: ["IPv4"], ipFamilyPolicy: "SingleStack", internalTrafficPolicy: "Cluster", type: "ClusterIP", sessionAffinity: "None" });
    const replaced = await c.core.replaceNamespacedService({
      name: "svc",
      namespace: ns,
      body: { metadata: { name: "svc", resourceVersion: svc.metadata?.resourceVersion }, spec: { ports: [{ port: 81 }] } },
    });
    expect(replaced.spec).toMatchObject({ clusterIP: svc.spec?.clusterIP, ipFamilies: ["IPv4"], ipFamilyPolicy: "SingleStack", internalTrafficPolicy: "Cluster" });
  });
});

describe("deletion", () => {
  const running = async (ns: string, name: string) =>
    waitFor(`${name} running`, async () => (await c.core.readNamespacedPod({ name, namespace: ns })).status?.phase === "Running");
  const gone = async (p: Promise<unknown>) => (await statusOf(p)).code === 404;

  it("treats gracePeriodSeconds 0 as a force delete: the pod is gone when the DELETE returns", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("forced", { annotations: { "sim.k8s-runner.dev/ignore-sigterm": "true" }, container: { stdin: true } }) });
    await running(ns, "forced");
    const answer = await c.core.deleteNamespacedPod({ name: "forced", namespace: ns, gracePeriodSeconds: 0 });
    expect(answer.metadata?.deletionTimestamp).toBeUndefined();
    expect(await gone(c.core.readNamespacedPod({ name: "forced", namespace: ns }))).toBe(true);
  });

  it("keeps a gracefully deleted pod until its containers end, a shorter second delete hastens it, and its dependents wait for it", async () => {
    const ns = await freshNamespace(c);
    const owner = await c.core.createNamespacedPod({ namespace: ns, body: pod("graceful", { annotations: { "sim.k8s-runner.dev/ignore-sigterm": "true" }, container: { stdin: true } }) });
    const ownerReferences = [{ apiVersion: "v1", kind: "Pod", name: "graceful", uid: owner.metadata!.uid! }];
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "dependent", ownerReferences } } });
    await running(ns, "graceful");

    const first = await c.core.deleteNamespacedPod({ name: "graceful", namespace: ns, gracePeriodSeconds: 600 });
    expect(first.metadata?.deletionGracePeriodSeconds).toBe(600);
    // the container ignores SIGTERM: the pod stays, Terminating, and so does what it owns
    const terminating = await c.core.readNamespacedPod({ name: "graceful", namespace: ns });
    expect(terminating.metadata?.deletionTimestamp).toBeDefined();
    expect((await c.core.readNamespacedConfigMap({ name: "dependent", namespace: ns })).metadata?.name).toBe("dependent");

    const second = await c.core.deleteNamespacedPod({ name: "graceful", namespace: ns, gracePeriodSeconds: 1 });
    expect(second.metadata?.deletionGracePeriodSeconds).toBe(1);
    expect(Date.parse(String(second.metadata?.deletionTimestamp))).toBeLessThan(Date.parse(String(first.metadata?.deletionTimestamp)));
    // SIGKILL at the shortened deadline, the kubelet's confirmation, then the collector
    await waitFor("the pod gone", () => gone(c.core.readNamespacedPod({ name: "graceful", namespace: ns })));
    await waitFor("the dependent collected", () => gone(c.core.readNamespacedConfigMap({ name: "dependent", namespace: ns })));
  });
});

describe("the watch cache", () => {
  // The cache ages events by this clock; moving it forward stands in for minutes passing.
  let clock = Date.now();
  const w = useCluster({ now: () => clock });

  /** A watch from `resourceVersion`: the events it delivers, as they arrive. */
  async function watchFrom(path: string, resourceVersion: string) {
    const seen: { type: string; code?: number; message?: string }[] = [];
    const abort = await new Watch(w.kc).watch(path, { resourceVersion }, (type, obj) => seen.push({ type, code: obj?.code, message: obj?.message }), () => {});
    return { seen, abort };
  }

  it("keeps at least 75 s of history, forgets a quiet type's events beyond its last 100, and answers an older version with an in-stream 410 at once", async () => {
    const ns = await freshNamespace(w);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    // A burst within 75 s grows the cache: all 150 stay resumable.
    const burst: string[] = [];
    for (let i = 0; i < 150; i++) burst.push((await w.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: `b${i}` } } })).metadata!.resourceVersion!);
    const fromStart = await watchFrom(path, String(Number(burst[0]) - 1));
    await waitFor("the burst replayed", () => fromStart.seen.length === 150);
    fromStart.abort.abort();

    // Events far apart in time: the cache stops growing, shrinks back to 100 and forgets the oldest.
    const spread: string[] = [];
    for (let i = 0; i < 400; i++) {
      clock += 80_000;
      spread.push((await w.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: `s${i}` } } })).metadata!.resourceVersion!);
    }
    const oldestKept = Number(spread[300]) - 1;
    const stale = await watchFrom(path, burst[0]!);
    await waitFor("the error event", () => stale.seen.length > 0);
    expect(stale.seen).toEqual([{ type: "ERROR", code: 410, message: `too old resource version: ${burst[0]} (${oldestKept})` }]);
    const justKept = await watchFrom(path, String(oldestKept));
    await waitFor("the kept history replayed", () => justKept.seen.length === 100);
    expect(justKept.seen.every((e) => e.type === "ADDED")).toBe(true);
    justKept.abort.abort();
  });

  it("brings the runner's pod watcher to relist when it resumes from a version the cache forgot", async () => {
    const ns = await freshNamespace(w);
    const watcher = new PodWatcher(kubeApi(w.kc), { namespace: ns, labelSelector: "app=watched", inactivityMs: 300, minBackoffMs: 50 }, createLogger("test", "silent"));
    watcher.start();
    try {
      await watcher.ready;
      await w.core.createNamespacedPod({ namespace: ns, body: pod("watched", { labels: { app: "watched" }, container: { stdin: true } }) });
      await waitFor("the watcher sees its pod", () => watcher.get("watched"));
      const lists = () => w.cluster.counters().requests["list pods"] ?? 0;
      const listed = lists();
      // Other pods' events, minutes apart, push everything the watcher has seen out of the cache;
      // its watch, going quiet, resumes from its last version and meets the 410.
      await w.core.createNamespacedPod({ namespace: ns, body: pod("other", { container: { stdin: true } }) });
      for (let i = 0; lists() === listed && i < 1000; i++) {
        clock += 80_000;
        await w.core.patchNamespacedPod({ name: "other", namespace: ns, body: [{ op: "add", path: `/metadata/annotations/n${i}`, value: "x" }] });
      }
      await waitFor("a relist", () => lists() > listed);
      // the relist found the pod again (it was never gone)
      expect(watcher.get("watched")?.metadata?.labels).toEqual({ app: "watched" });
    } finally {
      watcher.stop();
    }
  });
});

describe("env from Secrets and ConfigMaps", () => {
  const phaseOf = async (ns: string, name: string) => (await c.core.readNamespacedPod({ name, namespace: ns })).status?.phase;
  const tokenRef = (optional?: boolean) => ({ name: "TOKEN", valueFrom: { secretKeyRef: { name: "creds", key: "token", ...(optional !== undefined && { optional }) } } });

  it("holds a container in CreateContainerConfigError until its Secret exists, then starts it with the value", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("waits", { container: { stdin: true, env: [{ name: "PLAIN", value: "p" }, tokenRef()] } }) });
    const waiting = await waitFor("the config error", async () => {
      const state = (await c.core.readNamespacedPod({ name: "waits", namespace: ns })).status?.containerStatuses?.[0]?.state?.waiting;
      return state?.reason === "CreateContainerConfigError" ? state : undefined;
    });
    expect(waiting.message).toBe('secret "creds" not found');
    await c.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: "creds" }, stringData: { token: "s3cret" } } });
    await waitFor("Running", async () => (await phaseOf(ns, "waits")) === "Running" || undefined);
    const { stdout } = await exec(ns, "waits", "main", ["env"]);
    expect(stdout).toContain("TOKEN=s3cret\n");
    expect(stdout).toContain("PLAIN=p\n");
  });

  it("names a missing key, and skips an optional reference", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: "creds" }, stringData: { other: "x" } } });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("nokey", { container: { stdin: true, env: [tokenRef()] } }) });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("optional", { container: { stdin: true, env: [tokenRef(true)] } }) });
    const message = await waitFor("the config error", async () => (await c.core.readNamespacedPod({ name: "nokey", namespace: ns })).status?.containerStatuses?.[0]?.state?.waiting?.message?.match(/couldn't.*/)?.[0]);
    expect(message).toBe(`couldn't find key token in Secret ${ns}/creds`);
    await waitFor("Running", async () => (await phaseOf(ns, "optional")) === "Running" || undefined);
    expect((await exec(ns, "optional", "main", ["env"])).stdout).not.toContain("TOKEN=");
  });
});
