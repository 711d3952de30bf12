// pods/<name>/attach and pods/<name>/exec over WebSocket, channel protocols v4 and v5
// (channel.k8s.io): every binary message starts with a channel byte — 0 stdin, 1 stdout, 2
// stderr, 3 error (a Status JSON), 4 resize ({"Width","Height"}); v5 adds 255 = close(channel),
// so stdin can end without the socket.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { behaviourFor } from "./behaviour.ts";
import type { Kubelet } from "./kubelet.ts";
import { pickContainer } from "./logs.ts";
import type { KubeObject } from "./object.ts";
import { badRequest, StatusError } from "./status.ts";
import { runScript } from "./commands.ts";
import { execProgram, execStatus, notFoundStatus } from "./exec.ts";
import { HOST_IP } from "./node.ts";
import { onlcr } from "./tty.ts";

const SUPPORTED_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;
const EXEC_START_MS = 20;

function frame(channel: number, data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(data.length + 1);
  out[0] = channel;
  data.copy(out, 1);
  return out;
}

/** The kubelet tells the client the streams are up with an empty frame on its first output channel. */
function readySignal(send: (channel: number, data: Buffer) => void, stdout: boolean, stderr: boolean): void {
  if (stdout) send(STDOUT, Buffer.alloc(0));
  else if (stderr) send(STDERR, Buffer.alloc(0));
}

/** The kubelet's streaming port, which the apiserver dials for an attach. */
const KUBELET_PORT = 10250;

/**
 * What kube-apiserver's stream translator writes when it cannot reach the kubelet: it has
 * already upgraded the client's WebSocket (and sent the ready signal), so the failure comes as an
 * InternalError Status on the error channel, and the stream closes.
 */
function kubeletUnreachableStatus(): Record<string, unknown> {
  const cause = `dial tcp ${HOST_IP}:${KUBELET_PORT}: connect: connection refused`;
  return {
    metadata: {},
    status: "Failure",
    message: `Internal error occurred: ${cause}`,
    reason: "InternalError",
    details: { causes: [{ message: cause }] },
    code: 500,
  };
}

/** Answers a refused upgrade with its Status, before any WebSocket exists. */
function refuse(socket: Duplex, err: unknown): void {
  const e = err instanceof StatusError ? err : badRequest(String(err));
  const body = JSON.stringify(e.body());
  socket.end(`HTTP/1.1 ${e.code} ${e.reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/** One stdin message a container got over an attach, with the attaching client's User-Agent: who typed into which pod, and when. */
export type StdinWrite = { namespace: string; pod: string; container: string; userAgent: string; text: string; at: number };

/** Bounded so a long benchmark cannot grow memory without limit. */
const MAX_STDIN_RECORDED = 100_000;

export class AttachServer {
  private readonly wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => SUPPORTED_PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });
  private readonly sessions = new Map<WebSocket, { namespace: string; pod: string }>();
  private readonly stdin: StdinWrite[] = [];

  constructor(private readonly kubelet: Kubelet) {}

  get openSessions(): number {
    return this.sessions.size;
  }

  /** Every stdin message delivered to a container over an attach, in order. */
  stdinWrites(): StdinWrite[] {
    return [...this.stdin];
  }

  /**
   * Checks the request as the apiserver and kubelet would (400 for a bad container or a pod that
   * cannot be attached to); throws a StatusError to be answered before any upgrade.
   */
  prepare(pod: KubeObject, req: IncomingMessage, query: URLSearchParams, verb: "attach" | "exec" = "attach") {
    const offered = String(req.headers["sec-websocket-protocol"] ?? "").split(",").map((s) => s.trim());
    if (!offered.some((p) => SUPPORTED_PROTOCOLS.includes(p))) {
      throw badRequest(`unable to upgrade: requested protocols ${JSON.stringify(offered)} are not supported; use one of ${SUPPORTED_PROTOCOLS.join(", ")}`);
    }
    const phase = pod.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") {
      throw badRequest(`cannot ${verb === "attach" ? "attach to" : "exec into"} a container in a completed pod; current phase is ${phase}`);
    }
    const rt = this.kubelet.runtime(pod.metadata.namespace!, pod.metadata.name);
    const { name, record } = pickContainer(pod, rt, query.get("container"));
    const proc = record?.process;
    if (!proc?.running) {
      const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
      const reason = statuses.find((s: { name: string }) => s.name === name)?.state?.waiting?.reason ?? "ContainerCreating";
      throw badRequest(`container ${name} in pod ${pod.metadata.name} is waiting to start: ${reason}`);
    }
    const flag = (k: string) => query.get(k) === "true" || query.get(k) === "1";
    if (!flag("stdin") && !flag("stdout") && !flag("stderr")) throw badRequest("you must specify at least 1 of stdin, stdout, stderr");
    // stdin on a container created without it is accepted and goes nowhere, as with a real runtime.
    const wantStdin = flag("stdin") && proc.options.stdin;
    return { name, proc, wantStdin };
  }

  upgrade(pod: KubeObject, req: IncomingMessage, socket: Duplex, head: Buffer, query: URLSearchParams): void {
    let prepared: ReturnType<AttachServer["prepare"]>;
    try {
      prepared = this.prepare(pod, req, query);
    } catch (err) {
      refuse(socket, err);
      return;
    }
    const { name, proc, wantStdin } = prepared;
    if (behaviourFor(pod, name)["attach-closes-at-once"]) {
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        readySignal((channel, data) => ws.send(frame(channel, data)), true, false);
        ws.send(frame(ERROR, Buffer.from(JSON.stringify(kubeletUnreachableStatus()))));
        ws.close(1000);
      });
      return;
    }
    const flag = (k: string) => query.get(k) === "true" || query.get(k) === "1";
    const wantStdout = flag("stdout");
    const wantStderr = flag("stderr");
    const tty = flag("tty") && proc.options.tty;

    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sessions.set(ws, { namespace: pod.metadata.namespace!, pod: pod.metadata.name });
      const v5 = ws.protocol === "v5.channel.k8s.io";
      let stdinOpen = wantStdin;
      const send = (channel: number, data: Buffer) => {
        if (ws.readyState === ws.OPEN) ws.send(frame(channel, data));
      };
      readySignal(send, wantStdout, wantStderr);
      const detach = proc.attach({
        stdout: (d) => wantStdout && send(STDOUT, d),
        // With a tty, stderr is the terminal too; without, it is its own channel.
        stderr: (d) => (tty ? wantStdout && send(STDOUT, d) : wantStderr && send(STDERR, d)),
        end: () => {
          send(ERROR, Buffer.from(JSON.stringify({ metadata: {}, status: "Success" })));
          ws.close(1000);
        },
      });
      ws.on("message", (data: Buffer, isBinary) => {
        const buf = isBinary ? data : Buffer.from(data);
        if (buf.length === 0) return;
        const channel = buf[0]!;
        const payload = buf.subarray(1);
        if (channel === STDIN && stdinOpen) {
          if (this.stdin.length < MAX_STDIN_RECORDED) {
            this.stdin.push({ namespace: pod.metadata.namespace!, pod: pod.metadata.name!, container: name, userAgent: req.headers["user-agent"] ?? "", text: payload.toString("utf8"), at: Date.now() });
          }
          proc.writeStdin(payload);
        }
        else if (channel === RESIZE) {
          try {
            // The kubelet decodes with Go's case-insensitive JSON: client-node sends {"width","height"}.
            const raw = JSON.parse(payload.toString("utf8")) as Record<string, unknown>;
            const size = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k.toLowerCase(), v]));
            if (typeof size.width === "number" && typeof size.height === "number") proc.resize(size.width, size.height);
          } catch {
            // a malformed resize is ignored, as the kubelet does
          }
        } else if (v5 && channel === CLOSE && payload[0] === STDIN) {
          stdinOpen = false;
          proc.detached();
        }
      });
      ws.on("close", () => {
        this.sessions.delete(ws);
        detach();
        proc.detached();
      });
      ws.on("error", () => ws.terminate());
    });
  }

  /**
   * An exec: a short-lived process beside the container's own, running what exec.ts can run;
   * its exit code comes back on the error channel as the kubelet reports it.
   */
  exec(pod: KubeObject, req: IncomingMessage, socket: Duplex, head: Buffer, query: URLSearchParams): void {
    let prepared: ReturnType<AttachServer["prepare"]>;
    const command = query.getAll("command");
    try {
      if (command.length === 0) throw badRequest("you must specify at least one command for the container");
      prepared = this.prepare(pod, req, query, "exec");
    } catch (err) {
      refuse(socket, err);
      return;
    }
    const { proc } = prepared;
    const program = execProgram(command, { env: proc.options.env, hostname: pod.metadata.name });
    const flag = (k: string) => query.get(k) === "true" || query.get(k) === "1";
    const tty = flag("tty");
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sessions.set(ws, { namespace: pod.metadata.namespace!, pod: pod.metadata.name });
      const send = (channel: number, data: Buffer) => {
        if (ws.readyState === ws.OPEN) ws.send(frame(channel, tty && channel === STDOUT ? onlcr(data) : data));
      };
      const finish = (status: Record<string, unknown>) => {
        send(ERROR, Buffer.from(JSON.stringify(status)));
        ws.close(1000);
      };
      ws.on("close", () => this.sessions.delete(ws));
      ws.on("error", () => ws.terminate());
      readySignal(send, flag("stdout"), flag("stderr"));
      if (!program) {
        finish(notFoundStatus(command));
        return;
      }
      if ("cat" in program) {
        ws.on("message", (data: Buffer) => {
          if (data[0] === STDIN) send(STDOUT, data.subarray(1));
          else if (data[0] === CLOSE && data[1] === STDIN) finish(execStatus(command, 0));
        });
        return;
      }
      const ended = new AbortController();
      ws.on("close", () => ended.abort());
      void (async () => {
        // A runtime takes a moment to start the process; output before the client has set up its
        // streams could race client-go's stream setup, as it never does against a real kubelet.
        await new Promise((r) => setTimeout(r, EXEC_START_MS));
        const end = await runScript(program.script, {
          stdout: (b) => send(STDOUT, b),
          stderr: (b) => send(tty ? STDOUT : STDERR, b),
          sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
          fs: proc.options.fs,
          download: proc.options.download,
          signal: ended.signal,
        });
        // An `exec` of a program the simulator does not run ends as a missing executable would.
        finish(execStatus(command, "status" in end ? end.status : 127));
      })();
    });
  }

  /** Fault: cut attach streams (of one pod, or all) without a Status, as a dropped connection would. */
  cut(namespace?: string, pod?: string): number {
    let n = 0;
    for (const [ws, s] of this.sessions) {
      if ((namespace === undefined || s.namespace === namespace) && (pod === undefined || s.pod === pod)) {
        ws.terminate();
        n++;
      }
    }
    return n;
  }

  close(): void {
    for (const ws of this.sessions.keys()) ws.terminate();
    this.wss.close();
  }
}
