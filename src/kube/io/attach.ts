/**
 * Attaching to a container's terminal over the pods/attach WebSocket (channel.k8s.io v5 or v4:
 * each binary message starts with a channel byte — 0 stdin, 1 stdout, 2 stderr, 3 error
 * Status, 4 resize). Written against the wire rather than client-node's Attach because that
 * one reports nothing when the socket closes without a status and sends no heartbeat
 * (a stream cut without a status goes unnoticed); here every end of the stream settles `closed`, and pings detect a
 * dead connection.
 */
import type { KubeConfig, V1Status } from "@kubernetes/client-node";
import WebSocket from "ws";
import { trackAttachStream } from "../../metrics/figures.ts";
import { SpanKind, inSpan } from "../../observability/tracing.ts";

/** The channel bytes of channel.k8s.io that the runner speaks. */
const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4 } as const;

const PING_INTERVAL_MS = 30_000;
/** Stdin beyond this many unsent bytes is dropped rather than buffered without bound. */
const MAX_STDIN_BACKLOG = 1024 * 1024;

export type AttachTarget = {
  namespace: string;
  pod: string;
  container: string;
  tty: boolean;
  onOutput(bytes: Buffer, stream: "stdout" | "stderr"): void;
  /** Ping interval of the heartbeat that finds a dead connection (default 30 s). */
  heartbeatMs?: number;
};

export type AttachEnd = { status?: V1Status; error?: Error };

export type Attachment = {
  writeStdin(bytes: Uint8Array): void;
  resize(cols: number, rows: number): void;
  close(): void;
  /** Settles once, however the stream ends. */
  readonly closed: Promise<AttachEnd>;
};

/** The pods/attach WebSocket URL of `target` on the kubeconfig's current cluster. */
function attachUrl(kubeConfig: KubeConfig, target: AttachTarget): URL {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error("no current cluster in the kubeconfig");
  const query = new URLSearchParams({
    container: target.container,
    stdin: "true",
    stdout: "true",
    stderr: String(!target.tty),
    tty: String(target.tty),
  });
  const url = new URL(
    `${cluster.server.replace(/\/+$/, "")}/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}/attach?${query}`,
  );
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url;
}

/** Output channels to `target`; the error channel's Status is kept for the end. */
function readChannels(socket: WebSocket, target: AttachTarget, onStatus: (status: V1Status) => void, onTraffic: () => void): void {
  socket.on("message", (data: Buffer, isBinary: boolean) => {
    onTraffic();
    const message = isBinary ? data : Buffer.from(data);
    if (message.byteLength < 1) return;
    const channel = message[0];
    const payload = message.subarray(1);
    if ((channel === CHANNEL.stdout || channel === CHANNEL.stderr) && payload.byteLength > 0) {
      target.onOutput(Buffer.from(payload), channel === CHANNEL.stdout ? "stdout" : "stderr");
    } else if (channel === CHANNEL.error && payload.byteLength > 0) {
      try {
        onStatus(JSON.parse(payload.toString("utf8")) as V1Status);
      } catch {
        onStatus({ status: "Failure", message: payload.toString("utf8") });
      }
    }
  });
}

/** Settles once the socket is open; rejects with the refusal (its HTTP code and body) or the error. */
function opened(socket: WebSocket): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => reject(Object.assign(new Error(`attach refused with HTTP ${response.statusCode}`), { code: response.statusCode, body })));
    });
    socket.once("error", (error) => reject(error));
  });
}

/** `userAgent`: the replica's, so that what it typed into a pod can be told apart from another's. */
export async function attachContainer(kubeConfig: KubeConfig, target: AttachTarget, userAgent?: string): Promise<Attachment> {
  const url = attachUrl(kubeConfig, target);
  const options: WebSocket.ClientOptions = userAgent === undefined ? {} : { headers: { "user-agent": userAgent } };
  await kubeConfig.applyToHTTPSOptions(options);
  const socket = new WebSocket(url, ["v5.channel.k8s.io", "v4.channel.k8s.io"], options);

  let settle!: (end: AttachEnd) => void;
  const closed = new Promise<AttachEnd>((resolve) => (settle = resolve));
  trackAttachStream(closed);
  let status: V1Status | undefined;
  let alive = true;
  // Started once the socket is open: a ping on a CONNECTING socket throws.
  let heartbeat: NodeJS.Timeout | undefined;

  socket.on("pong", () => (alive = true));
  readChannels(socket, target, (received) => (status = received), () => (alive = true));
  socket.on("close", () => {
    clearInterval(heartbeat);
    settle(status ? { status } : {});
  });

  // The attach is its own span (docs/tracing.md): the WebSocket's handshake with the apiserver
  // until the stream is open, under the session's start or whatever else asked for it.
  const attributes = { "k8s_runner.pod": target.pod, "k8s_runner.container": target.container, "k8s_runner.tty": target.tty };
  await inSpan("terminal.attach", { kind: SpanKind.CLIENT, attributes }, () => opened(socket)).catch((error: unknown) => {
    socket.terminate();
    throw error;
  });
  heartbeat = setInterval(() => {
    if (!alive) return socket.terminate();
    alive = false;
    socket.ping();
  }, target.heartbeatMs ?? PING_INTERVAL_MS);
  heartbeat.unref();
  socket.on("error", (error) => {
    clearInterval(heartbeat);
    settle({ error });
  });

  const send = (channel: number, payload: Uint8Array) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    const message = Buffer.allocUnsafe(payload.byteLength + 1);
    message[0] = channel;
    message.set(payload, 1);
    socket.send(message);
  };

  return {
    writeStdin(bytes) {
      if (socket.bufferedAmount > MAX_STDIN_BACKLOG) return;
      send(CHANNEL.stdin, bytes);
    },
    resize(cols, rows) {
      send(CHANNEL.resize, Buffer.from(JSON.stringify({ Width: cols, Height: rows })));
    },
    close() {
      socket.close();
    },
    closed,
  };
}
