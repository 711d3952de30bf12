/**
 * A supervisor process for the core's tests: the real supervisor (internal socket, session
 * service) around the scripted backend, started as its own process like the real one.
 * Timings are shortened through env so tests need not wait for production cadences.
 */
import { loadCoreConfig } from "../../src/config/core.ts";
import { exitOnConfigError } from "../../src/config/startup.ts";
import { prepareSocketPath } from "../../src/internal/socket-path.ts";
import { exitOnStartupRefusal } from "../../src/launch/refusal.ts";
import { createLogger } from "../../src/log.ts";
import { runSupervisor, stopOnSignals } from "../../src/supervisor/run.ts";
import { DEFAULT_TIMINGS } from "../../src/supervisor/session-service.ts";
import { createScriptedBackend } from "./scripted-backend.ts";
import { SoleOwnership } from "../../src/sessions/sole-ownership.ts";

const config = exitOnConfigError(() => loadCoreConfig(process.env));
const log = createLogger("supervisor", config.logLevel);
await prepareSocketPath(config.internalSocketPath, config.internalSocketIsDefault).catch(exitOnStartupRefusal);
const timing = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const supervisor = await runSupervisor({
  config,
  backend: createScriptedBackend(),
  ownership: new SoleOwnership(),
  log,
  timings: {
    heartbeatMs: timing("TEST_HEARTBEAT_MS", DEFAULT_TIMINGS.heartbeatMs),
    watchTickMs: timing("TEST_WATCH_TICK_MS", DEFAULT_TIMINGS.watchTickMs),
    resizeThrottleMs: DEFAULT_TIMINGS.resizeThrottleMs,
  },
});
stopOnSignals(supervisor, log);
process.stdout.write("supervisor ready\n");
