/**
 * The typed Kubernetes clients reuse their connections (src/kube/cluster/connection-reuse.ts): against
 * a real HTTP server standing in for the apiserver, consecutive calls through any of the
 * clients arrive on one TCP connection, where client-node's own authentication opens one per
 * call; a connection the server has closed while idle is not reused.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { kubeApi } from "../../../src/kube/cluster/api.ts";
import { countedApiClient } from "../../../src/metrics/kube-client.ts";
import { waitFor } from "../../support/wait.ts";

const EMPTY_POD_LIST = JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "1" }, items: [] });

type Apiserver = { kubeConfig: KubeConfig; connections: () => number; open: () => number; server: Server };

let current: Server | undefined;
afterEach(async () => {
  current?.closeAllConnections();
  await new Promise((resolve) => current?.close(resolve));
  current = undefined;
});

async function apiserver(): Promise<Apiserver> {
  let connections = 0;
  let open = 0;
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(EMPTY_POD_LIST);
  });
  server.on("connection", (socket) => {
    connections += 1;
    open += 1;
    socket.on("close", () => (open -= 1));
  });
  current = server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return { kubeConfig, connections: () => connections, open: () => open, server };
}

describe("Kubernetes API connections", () => {
  it("are reused across calls and across the typed clients", async () => {
    const { kubeConfig, connections } = await apiserver();
    const api = kubeApi(kubeConfig);
    for (let i = 0; i < 5; i++) await api.core.listNamespacedPod({ namespace: "telo-sessions" });
    await api.batch.listNamespacedJob({ namespace: "telo-sessions" }).catch(() => undefined);
    expect(connections()).toBe(1);
  });

  it("would each be new with client-node's own authentication (what the reuse replaces)", async () => {
    const { kubeConfig, connections } = await apiserver();
    const core = countedApiClient(kubeConfig, CoreV1Api);
    for (let i = 0; i < 3; i++) await core.listNamespacedPod({ namespace: "telo-sessions" });
    expect(connections()).toBe(3);
  });

  it("open anew once the server has closed an idle one", async () => {
    const { kubeConfig, connections, open, server } = await apiserver();
    server.keepAliveTimeout = 50;
    const api = kubeApi(kubeConfig);
    await api.core.listNamespacedPod({ namespace: "telo-sessions" });
    await waitFor("the server to close the idle connection", () => open() === 0);
    const list = await api.core.listNamespacedPod({ namespace: "telo-sessions" });
    expect(list.items).toEqual([]);
    expect(connections()).toBe(2);
  });
});
