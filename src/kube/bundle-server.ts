/**
 * The bundle listener: a port of its own, apart from `/v1`, so that a NetworkPolicy can let
 * session pods reach it and nothing else of the runner (kubernetes.md §2.2, deploy.md §2.9).
 * It also answers the supervisor's liveness probe.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { listen } from "../launch/listen.ts";
import type { BundleStore } from "./bundle-store.ts";

export async function startBundleServer(store: BundleStore, port: number, host = "0.0.0.0"): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://bundles");
    if (request.method === "GET" && url.pathname === "/healthz") {
      response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      return;
    }
    const match = /^\/internal\/bundles\/([^/]+)$/.exec(url.pathname);
    const archive = match && request.method === "GET" ? store.take(decodeURIComponent(match[1]!), url.searchParams.get("token") ?? undefined) : undefined;
    if (!archive) {
      response.writeHead(404, { "content-type": "application/json" }).end('{"error":"not_found"}');
      return;
    }
    response
      .writeHead(200, { "content-type": "application/gzip", "cache-control": "no-store", "content-length": archive.byteLength })
      .end(archive);
  });
  await listen(server, port, host, "RUNNER_BUNDLE_PORT");
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
