/**
 * Listening on a TCP port with a one-line answer when it is taken: a second runner on the same
 * machine must say why it cannot start rather than die on a raw EADDRINUSE stack.
 */
import { type Server, createServer } from "node:net";

export class PortInUseError extends Error {
  override name = "PortInUseError";
}

export function listen(server: Server, port: number, host: string, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "EADDRINUSE"
          ? new PortInUseError(`port ${port} on ${host} is already in use (another runner?); set ${variable} to a free port`)
          : error,
      );
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

/** A port the system considers free right now. */
export async function ephemeralPort(host: string): Promise<number> {
  const probe = createServer();
  await listen(probe, 0, host, "");
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
