/**
 * The package's public surface: the `/v1` routes for embedding in another Hono server, the
 * supervisor client they need, the typed client for scripts, and the logger the routes take.
 */
export { createRunnerRoutes, notFound, type HandlerDeps } from "../handlers/index.ts";
export { SupervisorClient, SupervisorUnavailableError } from "./internal/client.ts";
export { RunnerClient, RunnerError, Terminal } from "./client/index.ts";
export { startApiServer } from "./api/server.ts";
export { createLogger, type Logger } from "./log.ts";
