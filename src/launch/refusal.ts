/**
 * Startup refusals that no restart can cure (a port another process holds, an unsafe socket
 * directory): one line on stderr and exit 2, the code `npm start` and the config loaders use for
 * "do not retry", instead of a raw stack and a crash loop.
 */
import { UnsafeSocketError } from "../internal/socket-path.ts";
import { PortInUseError } from "../internal/listen.ts";

export function exitOnStartupRefusal(error: unknown): never {
  if (error instanceof PortInUseError || error instanceof UnsafeSocketError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  throw error;
}
