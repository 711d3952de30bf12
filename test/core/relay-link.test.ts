/**
 * The multiplexed link between an api process and a supervisor (docs/relay.md), through real
 * processes: one connection carries many streams and a stalled one holds back only itself; the
 * peer listener refuses a caller without the shared credential; and an api process whose
 * supervisor is a peer over TCP serves an event stream and a terminal end to end.
 */
import type { ClientHttp2Stream } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerClient } from "../../src/client/index.ts";
import { routes } from "../../src/contract/routes.ts";
import { decodeByteFrame } from "../../src/contract/streams.ts";
import { SupervisorClient, SupervisorUnavailableError } from "../../src/internal/client.ts";
import { FrameDecoder, FrameKind, encodeFrame } from "../../src/internal/io-frames.ts";
import { INTERNAL_PROTOCOL_VERSION, PROTOCOL_HEADER } from "../../src/internal/protocol.ts";
import { InternalH2 } from "../support/internal-h2.ts";
import { freePort } from "../support/ports.ts";
import { type RunnerUnderTest, spawnTs, startRunner } from "../support/processes.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

const SECRET = "a-shared-peer-credential-of-40-characters";

/** The text of a terminal stream's output frames, as they arrive. */
function outputOf(stream: ClientHttp2Stream): { text(): string } {
  const decoder = new FrameDecoder();
  let text = "";
  stream.on("data", (chunk: Buffer) => {
    for (const frame of decoder.push(chunk)) {
      if (frame.kind !== FrameKind.binary) continue;
      const decoded = decodeByteFrame(frame.bytes);
      if (decoded) text += Buffer.from(decoded.payload).toString("latin1");
    }
  });
  return { text: () => text };
}

describe("the multiplexed link", () => {
  let runner: RunnerUnderTest;
  let peerPort: number;
  beforeAll(async () => {
    peerPort = await freePort();
    runner = await startRunner({ env: { RUNNER_PEER_LISTEN: `127.0.0.1:${peerPort}`, RUNNER_PEER_SECRET: SECRET } });
  });
  afterAll(async () => {
    await runner.close();
  });

  it("a stalled stream does not delay another session's stream on the same connection", async () => {
    const link = new SupervisorClient(runner.socketPath);
    const stalled = (await runner.client.createSession(sessionBody())).sessionId;
    const other = (await runner.client.createSession(sessionBody())).sessionId;
    await eventsUntil(runner.client, stalled, isStatus("running"));
    await eventsUntil(runner.client, other, isStatus("running"));
    try {
      // Never read: its window closes and the supervisor's follower waits on it.
      const blocked = await link.openTerminal(stalled, new URLSearchParams());
      blocked.pause();
      // `!output <n>`: the scripted workload writes n bytes to its terminal.
      const burst = Buffer.from("!output 65536\n".repeat(64));
      blocked.write(encodeFrame({ kind: FrameKind.binary, bytes: burst }));
      // Four MiB echoed: far past its window, so its output is held up behind the reader.
      await waitFor("the stalled session's echo to fill its window", async () => {
        const session = await link.call(routes.getSession, { params: { id: stalled } });
        return session.sessionId === stalled && blocked.readableLength > 0 ? true : undefined;
      });

      // On the same connection: a JSON call and another session's terminal go on at once.
      const live = await link.openTerminal(other, new URLSearchParams());
      const output = outputOf(live);
      const began = performance.now();
      live.write(encodeFrame({ kind: FrameKind.binary, bytes: Buffer.from("past the stall\n") }));
      await waitFor("the other session's echo", async () => (output.text().includes("past the stall") ? true : undefined), 5_000);
      expect(performance.now() - began).toBeLessThan(5_000);
      expect((await link.call(routes.getSession, { params: { id: other } })).sessionId).toBe(other);

      // The stalled stream was held, not lost: read, every byte of it arrives.
      const held = outputOf(blocked);
      blocked.resume();
      await waitFor("the stalled stream to flow once read", async () => (held.text().length >= 4 * 1024 * 1024 ? true : undefined));
      blocked.close();
      live.close();
    } finally {
      await link.close();
      await runner.client.deleteSession(stalled);
      await runner.client.deleteSession(other);
    }
  });

  it("refuses a peer without the shared credential", async () => {
    const target = { host: "127.0.0.1", port: peerPort };
    for (const headers of [{}, { "x-k8s-runner-peer-credential": "not-the-secret" }] as Record<string, string>[]) {
      const raw = new InternalH2(target);
      const answer = await raw.request("GET", "/internal/capabilities", { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION, ...headers });
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toMatchObject({ error: "unauthorized" });
      // The connection is ended, not kept for another try.
      await new Promise<void>((resolve) => (raw.session.closed ? resolve() : raw.session.once("close", () => resolve())));
    }
    const wrong = new SupervisorClient({ ...target, credential: "another-credential-also-long-enough!!" });
    await expect(wrong.call(routes.capabilities)).rejects.toThrow(SupervisorUnavailableError);
    await wrong.close();
    const right = new SupervisorClient({ ...target, credential: SECRET });
    expect(await right.call(routes.capabilities)).toBeTruthy();
    await right.close();
  });

  it("carries an event stream and a terminal end to end to an api whose supervisor is a peer", async () => {
    const port = await freePort();
    const api = spawnTs("src/api/main.ts", {
      PORT: String(port),
      RUNNER_INTERNAL_SOCKET: runner.socketPath,
      RUNNER_PEER_SUPERVISOR: `127.0.0.1:${peerPort}`,
      RUNNER_PEER_SECRET: SECRET,
    });
    try {
      const client = new RunnerClient(`http://127.0.0.1:${port}`);
      await waitFor("the peer api to be ready", async () => ((await fetch(`http://127.0.0.1:${port}/v1/ready`).catch(() => undefined))?.ok ? true : undefined));
      const { sessionId } = await client.createSession(sessionBody());
      await eventsUntil(client, sessionId, isStatus("running"));
      const terminal = client.terminal(sessionId);
      await terminal.send("over the peer link\n");
      expect(textOf(await framesUntilText(terminal, "over the peer link"))).toContain("over the peer link");
      terminal.close();
      // The session is the peer's: its own api sees it.
      expect((await runner.client.getSession(sessionId)).sessionId).toBe(sessionId);
      await client.deleteSession(sessionId);
      const events = [];
      for await (const item of client.events(sessionId)) events.push(item);
      expect(events.at(-1)).toMatchObject({ event: { type: "status", status: { kind: "stopped" } } });
    } finally {
      api.kill("SIGKILL");
    }
  });
});
