// Pod IPs: distinct loopback addresses, so what a container serves is a real listener.
import { createServer } from "node:net";

/**
 * Distinct addresses in 127.0.0.0/8 (all of it routes to loopback on Linux). Each cluster starts
 * at a random point of 127.10.0.1–127.249.255.254, so clusters in parallel test processes rarely
 * meet; when they do, the kubelet's port probe moves the pod to the next address.
 */
export class IpPool {
  private static readonly SPAN = 240 * 65536;
  private n = Math.floor(Math.random() * IpPool.SPAN);
  next(): string {
    const i = this.n++ % IpPool.SPAN;
    const host = i % 65536;
    const ip = `127.${10 + Math.floor(i / 65536)}.${host >> 8}.${host & 255}`;
    // .0 and .255 in the last octet are legal on loopback but confuse people reading logs.
    return (host & 255) === 0 || (host & 255) === 255 ? this.next() : ip;
  }
}

/** True when every port can be bound on ip right now (nothing else holds it). */
export async function portsFree(ip: string, ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once("error", () => resolve(false));
      srv.listen(port, ip, () => srv.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}
