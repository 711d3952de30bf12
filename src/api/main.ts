/**
 * The api process entry: `/v1` over HTTP, state in the supervisor. Started alone in the
 * deployment (one container) or by src/main.ts beside a supervisor child.
 */
import { loadConsoleConfig } from "../config/console.ts";
import { loadCoreConfig } from "../config/core.ts";
import { exitOnConfigError } from "../config/startup.ts";
import { createLogger } from "../log.ts";
import { startApiServer } from "./server.ts";

const config = exitOnConfigError(() => loadCoreConfig(process.env));
const consoleConfig = exitOnConfigError(() => loadConsoleConfig(process.env));
const log = createLogger("api", config.logLevel);
const server = await startApiServer({
  port: config.port,
  socketPath: config.internalSocketPath,
  corsOrigins: config.corsOrigins,
  console: consoleConfig.enabled,
  log,
});
log.info("api listening", { url: `http://0.0.0.0:${server.port}`, supervisorSocket: config.internalSocketPath });

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    log.info("api shutting down", { signal });
    void server.close().then(() => process.exit(0));
  });
}
