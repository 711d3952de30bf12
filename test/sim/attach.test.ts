// The attach subresource over WebSocket: client-node's Attach (which negotiates v5) with a tty
// that echoes and resizes, separate stdout/stderr without a tty, and the v4 protocol over raw ws.
import { Attach } from "@kubernetes/client-node";
import { PassThrough, Writable } from "node:stream";
import WebSocket from "ws";
import { describe, expect, it } from "vitest";
import { freshNamespace, pod, useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();

class Terminal extends Writable {
  text = "";
  rows = 24;
  columns = 80;
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    this.text += chunk.toString("utf8");
    cb();
  }
}

async function running(ns: string, name: string): Promise<void> {
  await waitFor(`${name} running`, async () => (await c.core.readNamespacedPod({ name, namespace: ns })).status?.phase === "Running");
}

describe("attach", () => {
  it("echoes typed input like a terminal (v5), delivers resizes, and ends with a Success status when the process exits", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({
      namespace: ns,
      body: pod("tty", { annotations: { "sim.k8s-runner.dev/report-resize": "true" }, container: { stdin: true, tty: true, stdinOnce: false } }),
    });
    await running(ns, "tty");
    const term = new Terminal();
    const stdin = new PassThrough();
    const ws = await new Attach(c.kc).attach(ns, "tty", "main", term, null, stdin, true);
    expect(ws.protocol).toBe("v5.channel.k8s.io");
    const statuses: string[] = [];
    ws.on("message", (d: Buffer) => {
      if (d[0] === 3) statuses.push(d.subarray(1).toString());
    });
    // client-node sends the terminal's size as soon as it attaches.
    await waitFor("initial size", () => term.text === "[sim] terminal resized to 80x24\r\n");
    term.text = "";
    stdin.write("hello\r");
    // Line discipline echo ("hello\r\n") followed by cat's own output ("hello\r\n").
    await waitFor("echo and output", () => term.text === "hello\r\nhello\r\n");
    stdin.write("ab\x7fc\r");
    await waitFor("backspace edit", () => term.text.endsWith("ab\b \bc\r\nac\r\n"));

    term.columns = 132;
    term.rows = 40;
    term.emit("resize");
    await waitFor("resize reported by the container", () => term.text.includes("[sim] terminal resized to 132x40\r\n"));

    stdin.write("\x03"); // ^C: SIGINT ends cat with 130
    await waitFor("status frame", () => statuses.length > 0);
    expect(JSON.parse(statuses[0]!)).toEqual({ metadata: {}, status: "Success" });
    const p = await waitFor("pod failed", async () => {
      const x = await c.core.readNamespacedPod({ name: "tty", namespace: ns });
      return x.status?.phase === "Failed" ? x : undefined;
    });
    expect(p.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(130);
  });

  it("keeps stdout and stderr apart without a tty", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({
      namespace: ns,
      body: pod("streams", { annotations: { "sim.k8s-runner.dev/start-delay-ms": "0" }, container: { stdin: true, tty: false } }),
    });
    await running(ns, "streams");
    const out = new Terminal();
    const err = new Terminal();
    const stdin = new PassThrough();
    await new Attach(c.kc).attach(ns, "streams", "main", out, err, stdin, false);
    stdin.write("raw bytes\n");
    await waitFor("echoed on stdout", () => out.text === "raw bytes\n");
    expect(err.text).toBe("");
  });

  for (const protocol of ["v4.channel.k8s.io", "v5.channel.k8s.io"]) {
    it(`speaks ${protocol}: stdin, stdout, resize, close`, async () => {
      const ns = await freshNamespace(c);
      await c.core.createNamespacedPod({ namespace: ns, body: pod("raw", { container: { stdin: true, tty: true, stdinOnce: true } }) });
      await running(ns, "raw");
      const url = `${c.cluster.url.replace("http", "ws")}/api/v1/namespaces/${ns}/pods/raw/attach?container=main&stdin=true&stdout=true&tty=true`;
      const ws = new WebSocket(url, [protocol]);
      await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
      expect(ws.protocol).toBe(protocol);
      let out = "";
      const status: string[] = [];
      ws.on("message", (d: Buffer) => {
        if (d[0] === 1) out += d.subarray(1).toString();
        if (d[0] === 3) status.push(d.subarray(1).toString());
      });
      const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
      ws.send(Buffer.concat([Buffer.from([4]), Buffer.from(JSON.stringify({ Width: 100, Height: 30 }))]));
      ws.send(Buffer.concat([Buffer.from([0]), Buffer.from("x\r")]));
      await waitFor("echo", () => out === "x\r\nx\r\n");
      if (protocol === "v5.channel.k8s.io") {
        // v5 close(stdin): a stdinOnce container sees EOF, cat exits 0, the socket ends with Success.
        ws.send(Buffer.from([255, 0]));
        await closed;
        expect(JSON.parse(status[0]!)).toEqual({ metadata: {}, status: "Success" });
      } else {
        ws.close();
        await closed;
      }
      const p = await waitFor("container completed after stdin closed", async () => {
        const x = await c.core.readNamespacedPod({ name: "raw", namespace: ns });
        return x.status?.phase === "Succeeded" ? x : undefined;
      });
      expect(p.status?.containerStatuses?.[0]?.state?.terminated?.reason).toBe("Completed");
    });
  }

  it("refuses to attach to a completed pod with 400", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("done") });
    await waitFor("done", async () => (await c.core.readNamespacedPod({ name: "done", namespace: ns })).status?.phase === "Succeeded");
    const url = `${c.cluster.url.replace("http", "ws")}/api/v1/namespaces/${ns}/pods/done/attach?container=main&stdout=true`;
    const ws = new WebSocket(url, ["v5.channel.k8s.io"]);
    const code = await new Promise<number>((resolve) => ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0)));
    expect(code).toBe(400);
  });

  // As kube-apiserver's stream translator answers when it cannot reach the kubelet: the
  // WebSocket is upgraded first, so the failure comes in the stream, which then closes.
  it("with attach-closes-at-once, opens, sends an InternalError Status and closes, every time, while the container runs", async () => {
    const ns = await freshNamespace(c);
    const annotations = { "sim.k8s-runner.dev/attach-closes-at-once": "true" };
    await c.core.createNamespacedPod({ namespace: ns, body: pod("refusing", { annotations, container: { stdin: true, tty: true } }) });
    await running(ns, "refusing");
    const url = `${c.cluster.url.replace("http", "ws")}/api/v1/namespaces/${ns}/pods/refusing/attach?container=main&stdin=true&stdout=true&tty=true`;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const ws = new WebSocket(url, ["v5.channel.k8s.io"]);
      const frames: Buffer[] = [];
      ws.on("message", (d: Buffer) => frames.push(d));
      const code = await new Promise<number>((resolve, reject) => ws.once("close", resolve).once("error", reject));
      expect(code).toBe(1000);
      expect(frames.map((frame) => frame[0])).toEqual([1, 3]);
      expect(frames[0]!.byteLength).toBe(1);
      expect(JSON.parse(frames[1]!.subarray(1).toString())).toMatchObject({
        status: "Failure",
        reason: "InternalError",
        code: 500,
        message: expect.stringMatching(/^Internal error occurred: dial tcp .*:10250: connect: connection refused$/),
      });
    }
    expect((await c.core.readNamespacedPod({ name: "refusing", namespace: ns })).status?.phase).toBe("Running");
  });

  it("can be cut by a fault, without a status frame", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("cut", { container: { stdin: true, tty: true } }) });
    await running(ns, "cut");
    const term = new Terminal();
    const ws = await new Attach(c.kc).attach(ns, "cut", "main", term, null, new PassThrough(), true);
    const frames: number[] = [];
    ws.on("message", (d: Buffer) => frames.push(d[0]!));
    const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
    await waitFor("session registered", () => c.cluster.counters().attachSessions > 0);
    expect(c.cluster.faults.cutAttachStreams({ namespace: ns, pod: "cut" })).toBe(1);
    await closed;
    expect(frames).not.toContain(3);
    expect((await c.core.readNamespacedPod({ name: "cut", namespace: ns })).status?.phase).toBe("Running");
  });
});
