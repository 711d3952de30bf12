// Container behaviours the runner relies on: the Telo kernel debug stream on the inspect port
// (with last-event-id resumption and --watch reloads) and the workspace container's HTTP surface.
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { freshNamespace, useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();

interface Frame {
  id: number;
  event: string;
  payload?: Record<string, unknown>;
}

/** Reads SSE frames from url until `enough` says stop; returns what arrived. */
async function readFrames(url: string, enough: (f: Frame[]) => boolean, lastEventId?: number): Promise<Frame[]> {
  const ac = new AbortController();
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (lastEventId) headers["last-event-id"] = String(lastEventId);
  const res = await fetch(url, { headers, signal: ac.signal });
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const frames: Frame[] = [];
  let buf = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body!) {
      buf += decoder.decode(chunk as Uint8Array, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const id = Number(/^id: (\d+)$/m.exec(block)?.[1]);
        const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!);
        expect(data.kind).toBe("event");
        expect(Date.parse(data.timestamp)).not.toBeNaN();
        frames.push({ id, event: data.event, payload: data.payload });
      }
      if (enough(frames)) break;
    }
  } finally {
    ac.abort();
  }
  return frames;
}

async function podIP(ns: string, name: string): Promise<string> {
  return waitFor(`${name} running`, async () => {
    const p = await c.core.readNamespacedPod({ name, namespace: ns });
    return p.status?.phase === "Running" ? p.status.podIP : undefined;
  });
}

describe("container behaviours", () => {
  it("serves the kernel debug stream on the inspect port and resumes after last-event-id", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "run" },
        spec: {
          restartPolicy: "Never",
          containers: [
            {
              name: "session",
              image: "telorun/node:latest-slim",
              command: ["telo", "run", "--inspect", "0.0.0.0:9230", "--no-open", "/app/telo.yaml"],
              stdin: true,
              tty: true,
              ports: [{ containerPort: 8080, protocol: "TCP" }],
            },
          ],
        },
      },
    });
    const ip = await podIP(ns, "run");
    const frames = await readFrames(`http://${ip}:9230/events`, (f) => f.length >= 3);
    expect(frames.map((f) => f.event)).toEqual(["Kernel.Starting", "Kernel.PortsResolved", "Kernel.Started"]);
    expect(frames[1]!.payload).toEqual({ ports: [{ port: 8080, protocol: "tcp" }] });
    c.cluster.faults.exitPod(ns, "run", { exitCode: 0 });
    // The stream closes with the container; what was emitted before is gone with it, so
    // resumption is checked on a second pod below.
    expect(frames.map((f) => f.id)).toEqual([1, 2, 3]);

    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "fails", annotations: { "sim.k8s-runner.dev/kernel-debug": "run-failed" } },
        spec: { restartPolicy: "Never", containers: [{ name: "session", image: "telorun/node", command: ["telo", "run", "--inspect=0.0.0.0:9230", "/app/x.yaml"], stdin: true }] },
      },
    });
    const ip2 = await podIP(ns, "fails");
    const resumed = await readFrames(`http://${ip2}:9230/events`, (f) => f.length >= 1, 1);
    expect(resumed[0]).toMatchObject({ id: 2, event: "Kernel.RunFailed", payload: { code: "SIM_RUN_FAILED" } });
  });

  // As on a real node a containerPort opens nothing and is not needed: the program listens where its application says.
  it("listens on the application's ports (listen-ports) whether or not the container declares them, and reports them", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "undeclared", annotations: { "sim.k8s-runner.dev/listen-ports": "3000/tcp" } },
        spec: {
          restartPolicy: "Never",
          containers: [{ name: "session", image: "telorun/node:latest-slim", command: ["telo", "run", "--inspect", "0.0.0.0:9230", "--no-open", "/app/telo.yaml"], stdin: true, tty: true }],
        },
      },
    });
    const ip = await podIP(ns, "undeclared");
    const answer = await waitFor("the listener", () => fetch(`http://${ip}:3000/`).then((res) => res.text()).catch(() => undefined));
    expect(answer).toBe(`undeclared/session listening on ${ip}:3000\n`);
    const frames = await readFrames(`http://${ip}:9230/events`, (f) => f.length >= 2);
    expect(frames[1]).toMatchObject({ event: "Kernel.PortsResolved", payload: { ports: [{ port: 3000, protocol: "tcp" }] } });
    c.cluster.faults.exitPod(ns, "undeclared", { exitCode: 0 });
  });

  it("runs a watch pod: workspace surface on 8099, app containers boot when their entry exists and reload on writes", async () => {
    const ns = await freshNamespace(c);
    const appCommand = ["sh", "-c", 'while [ ! -f "$TELO_ENTRY" ]; do sleep 0.2; done; exec telo run --watch --inspect "$TELO_INSPECT_ADDR" --no-open "$TELO_ENTRY"'];
    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "watch" },
        spec: {
          restartPolicy: "Never",
          containers: [
            { name: "workspace", image: "telorun/node", command: ["telo", "run", "/opt/telo-workspace/telo.yaml"], ports: [{ containerPort: 8099, protocol: "TCP" }], env: [{ name: "PORT", value: "8099" }] },
            {
              name: "app-web",
              image: "telorun/node",
              command: appCommand,
              stdin: true,
              tty: true,
              env: [{ name: "TELO_ENTRY", value: "/workspace/web/telo.yaml" }, { name: "TELO_INSPECT_ADDR", value: "0.0.0.0:9230" }],
              ports: [{ containerPort: 3000 }],
            },
          ],
        },
      },
    });
    const ip = await podIP(ns, "watch");
    const ws = `http://${ip}:8099/workspace`;
    expect(await (await fetch(ws)).json()).toEqual({ files: [] });

    const framesP = readFrames(`http://${ip}:9230/events`, (f) => f.length >= 6);
    const applied = await fetch(ws, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ write: [{ path: "web/telo.yaml", content: "kind: Telo.Application\n" }, { path: "node_modules/x.js", content: "aGk=", encoding: "base64" }] }),
    });
    expect(await applied.json()).toEqual({ written: 2, deleted: 0 });
    const tree = (await (await fetch(ws)).json()) as { files: { path: string; hash: string }[] };
    expect(tree.files.map((f) => f.path)).toEqual(["web/telo.yaml"]);
    expect(tree.files[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
    const file = (await (await fetch(`${ws}/file?path=web/telo.yaml&encoding=base64`)).json()) as { content: string; size: number };
    expect(Buffer.from(file.content, "base64").toString()).toBe("kind: Telo.Application\n");
    expect(file.size).toBe(23);
    const snap = (await (await fetch(`${ws}/snapshot`)).json()) as { files: unknown[] };
    expect(snap.files[0]).toMatchObject({ path: "web/telo.yaml", encoding: "base64" });

    // Touch the entry, as reload() does: the kernel stops and starts again.
    await fetch(ws, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ write: [{ path: "web/telo.yaml", content: file.content, encoding: "base64" }] }) });
    const frames = await framesP;
    expect(frames.slice(0, 6).map((f) => f.event)).toEqual(["Kernel.Starting", "Kernel.PortsResolved", "Kernel.Started", "Kernel.Stopped", "Kernel.Starting", "Kernel.PortsResolved"]);

    // What the next reload reports follows the pod's annotations at that moment.
    const more = readFrames(`http://${ip}:9230/events`, (f) => f.some((x) => x.event === "Kernel.PortsResolved" && (x.payload?.ports as unknown[]).length === 2), frames[frames.length - 1]!.id);
    await c.core.patchNamespacedPod(
      { name: "watch", namespace: ns, body: [{ op: "add", path: "/metadata/annotations", value: { "sim.k8s-runner.dev/kernel-ports.app-web": "3000/tcp,5353/udp" } }] },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    await fetch(ws, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ write: [{ path: "web/telo.yaml", content: "kind: Telo.Application # v2\n" }] }) });
    const reloaded = (await more).find((f) => f.event === "Kernel.PortsResolved" && (f.payload?.ports as unknown[]).length === 2);
    expect(reloaded?.payload).toEqual({ ports: [{ port: 3000, protocol: "tcp" }, { port: 5353, protocol: "udp" }] });

    const missing = await fetch(`${ws}/file?path=nope.yaml`);
    expect(missing.status).toBe(500);
    expect(((await missing.json()) as { error: string }).error).toContain("ENOENT");
    const traversal = await fetch(ws, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ write: [{ path: "../etc/passwd", content: "x" }] }) });
    expect(traversal.status).toBe(500);
  });
});

describe("downloads in init containers", () => {
  it("fetches the body URL for real: a gzip body lets the pod start, a 404 fails it as busybox wget would", async () => {
    const { createServer } = await import("node:http");
    const { gzipSync } = await import("node:zlib");
    let fetched = 0;
    const server = createServer((req, res) => {
      if (req.url === "/bundle?token=good") {
        fetched++;
        res.writeHead(200, { "content-type": "application/gzip" });
        res.end(gzipSync(Buffer.alloc(1024)));
      } else {
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"error":"not_found"}');
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const ns = await freshNamespace(c);
      const withFetch = (name: string, url: string) => ({
        metadata: { name },
        spec: {
          restartPolicy: "Never",
          initContainers: [
            { name: "body-fetch", image: "busybox:stable", command: ["sh", "-c"], args: [`set -e; wget -qO /tmp/body.tgz "${url}"; tar xzf /tmp/body.tgz -C /app`], terminationMessagePolicy: "FallbackToLogsOnError" },
          ],
          containers: [{ name: "session", image: "telorun/node", stdin: true, tty: true }],
        },
      });
      await c.core.createNamespacedPod({ namespace: ns, body: withFetch("good", `${base}/bundle?token=good`) });
      await c.core.createNamespacedPod({ namespace: ns, body: withFetch("spent", `${base}/bundle?token=bad`) });
      await podIP(ns, "good");
      expect(fetched).toBe(1);
      const failed = await waitFor("spent fails", async () => {
        const p = await c.core.readNamespacedPod({ name: "spent", namespace: ns });
        return p.status?.phase === "Failed" ? p : undefined;
      });
      expect(failed.status?.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({
        exitCode: 1,
        reason: "Error",
        message: "wget: server returned error: HTTP/1.1 404 Not Found\n",
      });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
