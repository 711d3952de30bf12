// list+watch semantics through client-node's Watch and informer: events, selectors, resuming
// from a resourceVersion, bookmarks, server-side timeouts, 410 Expired and reconnection.
import { makeInformer, Watch, type V1ConfigMap, type V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { freshNamespace, pod, useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster({ bookmarkIntervalMs: 100 });

interface Seen {
  type: string;
  name?: string;
  rv?: string;
  code?: number;
}

/** Opens a watch and records what arrives, plus how it ended. */
async function record(path: string, query: Record<string, string | number | boolean>) {
  const seen: Seen[] = [];
  let ended: { err: unknown } | undefined;
  const abort = await new Watch(c.kc).watch(
    path,
    query,
    (type, obj) => seen.push({ type, name: obj?.metadata?.name, rv: obj?.metadata?.resourceVersion, code: obj?.code }),
    (err) => {
      ended = { err };
    },
  );
  return { seen, abort, ended: () => ended };
}

describe("simulated apiserver: watch", () => {
  it("counts open watches", async () => {
    const ns = await freshNamespace(c);
    const before = c.cluster.counters().openWatches;
    const w = await record(`/api/v1/namespaces/${ns}/pods`, {});
    await waitFor("watch registered", () => c.cluster.counters().openWatches === before + 1);
    w.abort.abort();
    await waitFor("watch released", () => c.cluster.counters().openWatches === before);
  });

  it("streams ADDED, MODIFIED and DELETED for matching objects only", async () => {
    const ns = await freshNamespace(c);
    const w = await record(`/api/v1/namespaces/${ns}/configmaps`, { labelSelector: "watched=yes" });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "other" } } });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "w", labels: { watched: "yes" } } } });
    await c.core.replaceNamespacedConfigMap({ name: "w", namespace: ns, body: { metadata: { name: "w", labels: { watched: "yes" } }, data: { a: "1" } } });
    await c.core.deleteNamespacedConfigMap({ name: "w", namespace: ns });
    await waitFor("DELETED", () => w.seen.some((e) => e.type === "DELETED"));
    expect(w.seen.map((e) => `${e.type} ${e.name}`)).toEqual(["ADDED w", "MODIFIED w", "DELETED w"]);
    w.abort.abort();
  });

  it("sends DELETED when an object stops matching the selector and ADDED when it starts", async () => {
    const ns = await freshNamespace(c);
    const w = await record(`/api/v1/namespaces/${ns}/configmaps`, { labelSelector: "keep=1" });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "m" } } });
    await c.core.replaceNamespacedConfigMap({ name: "m", namespace: ns, body: { metadata: { name: "m", labels: { keep: "1" } } } });
    await c.core.replaceNamespacedConfigMap({ name: "m", namespace: ns, body: { metadata: { name: "m", labels: { keep: "0" } } } });
    await waitFor("two events", () => w.seen.length >= 2);
    expect(w.seen.map((e) => e.type)).toEqual(["ADDED", "DELETED"]);
    w.abort.abort();
  });

  it("replays the current state when no resourceVersion is given, and only later events from a resourceVersion", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "before" } } });
    const list = await c.core.listNamespacedConfigMap({ namespace: ns });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "after" } } });
    const all = await record(`/api/v1/namespaces/${ns}/configmaps`, {});
    const resumed = await record(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: list.metadata!.resourceVersion! });
    await waitFor("initial state", () => all.seen.length >= 2 && resumed.seen.length >= 1);
    expect(all.seen.map((e) => e.name).sort()).toEqual(["after", "before"]);
    expect(resumed.seen.map((e) => `${e.type} ${e.name}`)).toEqual(["ADDED after"]);
    all.abort.abort();
    resumed.abort.abort();
  });

  it("watches one object by field selector", async () => {
    const ns = await freshNamespace(c);
    const w = await record(`/api/v1/namespaces/${ns}/pods`, { fieldSelector: "metadata.name=one" });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("two") });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("one") });
    await waitFor("pod one to run", () => w.seen.some((e) => e.type === "MODIFIED"));
    expect(new Set(w.seen.map((e) => e.name))).toEqual(new Set(["one"]));
    w.abort.abort();
  });

  it("sends bookmarks when asked and ends the watch at timeoutSeconds", async () => {
    const ns = await freshNamespace(c);
    const w = await record(`/api/v1/namespaces/${ns}/configmaps`, { allowWatchBookmarks: true, timeoutSeconds: 1 });
    await waitFor("watch to end", () => w.ended());
    const bookmark = w.seen.find((e) => e.type === "BOOKMARK");
    expect(Number(bookmark?.rv)).toBeGreaterThan(0);
    expect(w.ended()!.err).toBeNull();
  });

  it("answers a watch from a compacted resourceVersion with an in-stream 410 Expired", async () => {
    const ns = await freshNamespace(c);
    const cm = await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "x" } } });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "y" } } });
    c.cluster.faults.expireResourceVersions();
    const w = await record(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: cm.metadata!.resourceVersion! });
    await waitFor("the error event", () => w.seen.length > 0);
    expect(w.seen[0]).toMatchObject({ type: "ERROR", code: 410 });
    await waitFor("the stream to end", () => w.ended());
  });

  it("can answer the watch request itself with HTTP 410, which client-node reports through done()", async () => {
    const ns = await freshNamespace(c);
    c.cluster.faults.failNext({ verb: "watch", resource: "configmaps", code: 410 });
    const w = await record(`/api/v1/namespaces/${ns}/configmaps`, {});
    const ended = await waitFor("done", () => w.ended());
    expect((ended.err as { statusCode?: number }).statusCode).toBe(410);
  });

  it("keeps an informer in sync across dropped watches and a 410 relist", async () => {
    const ns = await freshNamespace(c);
    const listFn = () => c.core.listNamespacedConfigMap({ namespace: ns });
    const informer = makeInformer<V1ConfigMap>(c.kc, `/api/v1/namespaces/${ns}/configmaps`, listFn);
    let stopped = false;
    informer.on("error", () => {
      // The informer stops on errors; restart it, as the runner must.
      setTimeout(() => !stopped && void informer.start(), 10);
    });
    await informer.start();
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "a" } } });
    await waitFor("a in cache", () => informer.get("a", ns));

    c.cluster.faults.dropWatches("configmaps");
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "b" } } });
    await waitFor("b in cache after the drop", () => informer.get("b", ns));

    c.cluster.faults.expireResourceVersions();
    c.cluster.faults.dropWatches("configmaps");
    await c.core.deleteNamespacedConfigMap({ name: "a", namespace: ns });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "c" } } });
    await waitFor("cache to converge after the 410", () => !informer.get("a", ns) && informer.get("c", ns));
    expect(informer.list(ns).map((o) => o.metadata?.name).sort()).toEqual(["b", "c"]);
    stopped = true;
    await informer.stop();
  });

  it("prints server-side Tables in watch events when asked, as kubectl get --watch asks", async () => {
    const ns = await freshNamespace(c);
    const ac = new AbortController();
    const res = await fetch(`${c.cluster.url}/api/v1/namespaces/${ns}/pods?watch=true`, {
      headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" },
      signal: ac.signal,
    });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("t", { annotations: { "sim.k8s-runner.dev/start-delay-ms": "60000" } }) });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    const ev = JSON.parse(text.slice(0, text.indexOf("\n")));
    expect(ev.type).toBe("ADDED");
    expect(ev.object.kind).toBe("Table");
    expect(ev.object.columnDefinitions.map((col: { name: string }) => col.name).slice(0, 5)).toEqual(["Name", "Ready", "Status", "Restarts", "Age"]);
    expect(ev.object.rows[0].cells.slice(0, 3)).toEqual(["t", "0/1", "Pending"]);
  });

  it("watches pods across namespaces", async () => {
    const a = await freshNamespace(c);
    const b = await freshNamespace(c);
    const w = await record(`/api/v1/pods`, { labelSelector: "x=cross" });
    await c.core.createNamespacedPod({ namespace: a, body: pod("p", { labels: { x: "cross" } }) });
    await c.core.createNamespacedPod({ namespace: b, body: pod("p", { labels: { x: "cross" } }) });
    await waitFor("both pods", () => w.seen.filter((e) => e.type === "ADDED").length === 2);
    w.abort.abort();
    const p: V1Pod[] = (await c.core.listPodForAllNamespaces({ labelSelector: "x=cross" })).items;
    expect(p.map((x) => x.metadata?.namespace).sort()).toEqual([a, b].sort());
  });
  it("delivers each change a lag after it happened, in order, while lists stay current; a watch from a list made meanwhile gets nothing twice", async () => {
    const ns = await freshNamespace(c);
    const lagMs = 600;
    const before = await c.core.listNamespacedConfigMap({ namespace: ns });
    const early = await record(`/api/v1/namespaces/${ns}/configmaps`, {});
    await waitFor("watch registered", () => c.cluster.counters().openWatches > 0);
    c.cluster.faults.lagWatches({ resource: "configmaps", ms: lagMs });
    try {
      const made = performance.now();
      await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "one" } } });
      await c.core.replaceNamespacedConfigMap({ name: "one", namespace: ns, body: { metadata: { name: "one" }, data: { a: "1" } } });
      // A list has both changes at once; the open watch has neither yet.
      const list = await c.core.listNamespacedConfigMap({ namespace: ns });
      expect(list.items.map((item) => item.data?.a)).toEqual(["1"]);
      expect(early.seen.filter((e) => e.type !== "BOOKMARK")).toEqual([]);
      // A watch from that list and one from before the changes, started while the lag holds them.
      const fromList = await record(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: list.metadata!.resourceVersion!, allowWatchBookmarks: true });
      const fromBefore = await record(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: before.metadata!.resourceVersion! });
      await c.core.deleteNamespacedConfigMap({ name: "one", namespace: ns });

      const changes = (w: Awaited<ReturnType<typeof record>>) => w.seen.filter((e) => e.type !== "BOOKMARK").map((e) => e.type);
      await waitFor("the lagged events", () => changes(early).length === 3 && changes(fromBefore).length === 3);
      expect(performance.now() - made).toBeGreaterThanOrEqual(lagMs);
      expect(changes(early)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
      expect(changes(fromBefore)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
      await waitFor("the delete after the list", () => changes(fromList).length === 1);
      expect(changes(fromList)).toEqual(["DELETED"]);
      // No bookmark got ahead of an event the watch had not been sent.
      const deletedRv = Number(fromList.seen.find((e) => e.type === "DELETED")!.rv);
      for (const bookmark of fromList.seen.filter((e, index) => e.type === "BOOKMARK" && index < fromList.seen.findIndex((x) => x.type === "DELETED"))) {
        expect(Number(bookmark.rv)).toBeLessThan(deletedRv);
      }
      for (const w of [early, fromList, fromBefore]) w.abort.abort();
    } finally {
      c.cluster.faults.lagWatches({ ms: 0 });
    }
  });
});
