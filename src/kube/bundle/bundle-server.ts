/**
 * The bundle listener: a port of its own, apart from `/v1`, so that a NetworkPolicy can let
 * session pods reach it and nothing else of the runner (docs/kubernetes.md "Run pods"; docs/operating.md "What gets installed").
 * It also answers the supervisor's liveness probe.
 */
import { type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { listen } from "../../internal/listen.ts";
import type { BundleStore } from "./bundle-store.ts";
import type { PoolClaims } from "../pool/pool-claims.ts";

const NOT_FOUND = '{"error":"not_found"}';

/** `claims`: the warm pool's claim route, when the pool is on. */
export async function startBundleServer(store: BundleStore, port: number, host = "0.0.0.0", claims?: PoolClaims): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://bundles");
    if (request.method === "GET" && url.pathname === "/healthz") {
      response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      return;
    }
    const pool = /^\/internal\/pool\/([^/]+)$/.exec(url.pathname);
    if (pool && request.method === "GET" && claims) {
      void answerPoll(claims, decodeURIComponent(pool[1]!), url.searchParams.get("token") ?? undefined, response);
      return;
    }
    const match = /^\/internal\/bundles\/([^/]+)$/.exec(url.pathname);
    const archive = match && request.method === "GET" ? store.take(decodeURIComponent(match[1]!), url.searchParams.get("token") ?? undefined) : undefined;
    if (!archive) {
      response.writeHead(404, { "content-type": "application/json" }).end(NOT_FOUND);
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

/**
 * A pool pod's poll: its claim (a shell script, once), or 408 after the hold so that its shell
 * polls again, or 404 for a pod or token this listener does not know. A poll whose connection
 * closes is let go at once.
 */
async function answerPoll(claims: PoolClaims, pod: string, token: string | undefined, response: ServerResponse): Promise<void> {
  const gone = new AbortController();
  response.once("close", () => gone.abort());
  const answer = await claims.poll(pod, token, gone.signal);
  if (response.destroyed) return;
  if (answer.kind === "claimed") {
    response.writeHead(200, { "content-type": "text/x-shellscript", "cache-control": "no-store", "content-length": answer.answer.byteLength }).end(answer.answer);
  } else if (answer.kind === "not-yet") response.writeHead(408, { "content-type": "application/json" }).end('{"error":"not_claimed_yet"}');
  else response.writeHead(404, { "content-type": "application/json" }).end(NOT_FOUND);
}
