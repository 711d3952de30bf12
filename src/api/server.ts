/**
 * The api process's HTTP server: the `/v1` routes on @hono/node-server, terminal upgrades
 * taken before Hono (upgrade.ts) and spliced to the supervisor, talking to the supervisor over
 * one multiplexed connection otherwise.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { createConsoleRoutes } from "../../handlers/console.ts";
import { createRunnerRoutes, notFound } from "../../handlers/index.ts";
import { metrics } from "../../handlers/metrics.ts";
import type { HandlerDeps } from "../../handlers/support.ts";
import type { AccessConfig } from "../config/access.ts";
import { CloseCodes } from "../contract/streams.ts";
import { SupervisorClient } from "../internal/client.ts";
import { handleChannelPossible } from "../internal/handle-channel.ts";
import { TerminalHandoff } from "../internal/terminal-handoff.ts";
import { Splices } from "../internal/terminal-splice.ts";
import type { SupervisorTarget } from "../internal/link.ts";
import { listen } from "../internal/listen.ts";
import { type Logger, createLogger } from "../log.ts";
import { startProcessMetrics } from "../metrics/registry.ts";
import { requestLog } from "./request-log.ts";
import { SessionRouter } from "../internal/session-router.ts";
import { serveUpgrades } from "./upgrade.ts";
import { RUNNER_VERSION } from "../version.ts";

export type ApiServer = { url: string; port: number; close(): Promise<void> };

/** How long closing WebSockets may take their close handshake before they are cut. */
const WEBSOCKET_CLOSE_GRACE_MS = 1_000;

export async function startApiServer(options: {
  port: number;
  host: string;
  /**
   * The supervisor's socket (under `npm start` it follows from the port listened on), or a
   * supervisor's peer address with the shared credential (RUNNER_PEER_SUPERVISOR).
   */
  socketPath: (port: number) => string | SupervisorTarget;
  /**
   * Several replicas (RUNNER_REPLICA_ID): a session another replica serves is reached at that
   * replica's supervisor (session-router.ts), with RUNNER_PEER_SECRET when set, else the
   * credential the local supervisor keeps.
   */
  replicas?: { credential: string | undefined };
  corsOrigins: string[] | undefined;
  access: AccessConfig;
  /** The process's logger; a host starting the server itself may leave it out (stderr, info). */
  log?: Logger;
  /** Serve the session console at /console (RUNNER_CONSOLE). */
  console?: boolean;
  /**
   * The supervisor's handoff socket (beside its internal socket in the same pod): terminals' client
   * sockets are handed to it rather than spliced (docs/relay.md "The handoff"), when this process
   * can open the channel.
   */
  handoffPath?: string | undefined;
}): Promise<ApiServer> {
  const log = options.log ?? createLogger("api", "info");
  startProcessMetrics("api");
  const app = new Hono();
  // The live terminals, spliced to their supervisors: closed with a code when this process stops.
  const splices = new Splices();
  app.use("*", requestLog(log));

  // Listening is ours (a taken port is one clear line); the routes are added before the
  // first request is read, once the port (and so the socket path) is known.
  const server = createAdaptorServer({ fetch: app.fetch, hostname: options.host }) as Server;
  await listen(server, options.port, options.host, "PORT");
  const port = (server.address() as AddressInfo).port;
  // One connection to the local supervisor; a session held by a peer replica is reached over a
  // peer link to that replica's supervisor (docs/replicas.md).
  // It follows the placement the supervisor tells (one replica's: once, that it runs alone).
  const router = new SessionRouter(new SupervisorClient(options.socketPath(port)), options.replicas?.credential, log);
  router.start();
  const supervisorFor = (sessionId?: string) => router.supervisorFor(sessionId);
  const routeSession: HandlerDeps["routeSession"] = (sessionId, wait, attempt, signal) => router.routed(sessionId, wait, attempt, signal);
  app.get("/metrics", metrics({ supervisorFor }));
  app.route("/", createRunnerRoutes({ supervisorFor, routeSession, corsOrigins: options.corsOrigins, version: RUNNER_VERSION, access: options.access, log }));
  if (options.console) app.route("/", createConsoleRoutes({ supervisorFor, log }));
  app.notFound(notFound);
  const handoff = options.handoffPath !== undefined && handleChannelPossible() ? new TerminalHandoff(options.handoffPath, log) : undefined;
  serveUpgrades(server, app, splices, handoff, log);
  return {
    url: `http://${options.host === "0.0.0.0" ? "127.0.0.1" : options.host}:${port}`,
    port,
    async close() {
      // Stop accepting; SSE responses end with their connections; terminals get a close code
      // that says "come back" (docs/operating.md "Readiness and shutdown").
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await splices.closeAll({ code: CloseCodes.serviceRestart, reason: "runner shutting down" }, WEBSOCKET_CLOSE_GRACE_MS);
      if ("closeAllConnections" in server) server.closeAllConnections();
      await closed;
      handoff?.close();
      await router.close();
    },
  };
}
