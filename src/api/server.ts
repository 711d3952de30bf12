/**
 * The api process's HTTP server: the `/v1` routes on @hono/node-server with WebSocket
 * support, talking to the supervisor over the internal socket.
 */
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { createNodeWebSocket } from "@hono/node-ws";
import { Hono } from "hono";
import { createConsoleRoutes } from "../../handlers/console.ts";
import { createRunnerRoutes, notFound } from "../../handlers/index.ts";
import { metrics } from "../../handlers/metrics.ts";
import { SupervisorClient } from "../internal/client.ts";
import { type Logger, createLogger } from "../log.ts";
import { startProcessMetrics } from "../metrics/registry.ts";
import { requestLog } from "./request-log.ts";
import { RUNNER_VERSION } from "../version.ts";

export type ApiServer = { url: string; port: number; close(): Promise<void> };

export async function startApiServer(options: {
  port: number;
  host?: string;
  socketPath: string;
  corsOrigins: string[] | undefined;
  /** The process's logger; a host starting the server itself may leave it out (stderr, info). */
  log?: Logger;
  /** Serve the session console at /console (RUNNER_CONSOLE). */
  console?: boolean;
}): Promise<ApiServer> {
  const log = options.log ?? createLogger("api", "info");
  startProcessMetrics("api");
  const supervisor = new SupervisorClient(options.socketPath);
  const app = new Hono();
  const { injectWebSocket, upgradeWebSocket, wss } = createNodeWebSocket({ app });
  app.use("*", requestLog(log));
  app.get("/metrics", metrics({ supervisor }));
  app.route("/", createRunnerRoutes({ supervisor, corsOrigins: options.corsOrigins, version: RUNNER_VERSION, upgradeWebSocket, log }));
  if (options.console) app.route("/", createConsoleRoutes({ supervisor, log }));
  app.notFound(notFound);

  const server = await new Promise<ServerType>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, port: options.port, hostname: options.host ?? "0.0.0.0" }, () => resolve(started));
    started.once("error", reject);
  });
  injectWebSocket(server);
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ("closeAllConnections" in server) server.closeAllConnections();
      });
      await supervisor.close();
    },
  };
}
