// Real sockets on a pod's loopback IP: what a container "serves" is something a client can dial.
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import http from "node:http";

export interface Closable {
  close(): Promise<void>;
}

/** Starts an HTTP server on ip:port; resolves once listening (or rejects, e.g. EADDRINUSE). */
export function listenHttp(ip: string, port: number, handler: http.RequestListener): Promise<Closable> {
  const server = http.createServer({ keepAliveTimeout: 1000 }, handler);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, ip, () => {
      server.off("error", reject);
      resolve({
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/**
 * A declared containerPort: TCP answers any HTTP request with a short identification (a plain
 * accept is all a reachability probe needs); UDP echoes datagrams.
 */
export async function listenContainerPort(ip: string, port: number, protocol: string, who: string): Promise<Closable> {
  if (protocol === "UDP") {
    const sock: UdpSocket = createSocket("udp4");
    await new Promise<void>((resolve, reject) => {
      sock.once("error", reject);
      sock.bind(port, ip, () => resolve());
    });
    sock.on("message", (msg, rinfo) => sock.send(msg, rinfo.port, rinfo.address));
    return { close: () => new Promise<void>((done) => sock.close(() => done())) };
  }
  return listenHttp(ip, port, (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(`${who} listening on ${ip}:${port}\n`);
  });
}
