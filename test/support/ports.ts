import { createServer } from "node:net";

/** A TCP port free on 127.0.0.1 right now (the OS picks it; tests and benchmarks use it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
