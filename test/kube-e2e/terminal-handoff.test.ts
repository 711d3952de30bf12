/**
 * Terminals handed by the api to its supervisor (docs/relay.md "The handoff"), the api started as
 * deployed (no channel to this test process). The proof that the api is off the terminal's path:
 * killed, its terminals go on echoing. Its restart and the supervisor's each open the handle
 * channel again, and terminals opened after are handed over too; the supervisor's stop closes a
 * handed terminal itself, with 1012; killed, it takes the client's connection with it.
 */
import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Terminal, TerminalFrame } from "../../src/client/index.ts";
import { type KubeRunner, runningSession, startKubeRunner } from "../support/kube-runner.ts";
import { framesToClose, framesUntilText, textOf } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

type ByteFrame = Extract<TerminalFrame, { kind: "bytes" }>;
const byteFrames = (frames: TerminalFrame[]) => frames.filter((frame): frame is ByteFrame => frame.kind === "bytes");

/** Types `text` and reads until its echo and output line came back. */
async function typed(terminal: Terminal, text: string): Promise<ByteFrame[]> {
  await terminal.send(`${text}\r`);
  return byteFrames(await framesUntilText(terminal, `${text}\r\n${text}`));
}

/** A terminal of `sessionId` opened through the api, once the api can hand it over (its channel opens just after it starts). */
async function handedTerminal(runner: KubeRunner, sessionId: string, marker: string): Promise<Terminal> {
  const terminal = runner.client.terminal(sessionId);
  await typed(terminal, marker);
  return terminal;
}

describe("terminals handed to the supervisor", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner({ handoff: true });
  }, 60_000);
  afterAll(() => runner?.close());

  it("goes on echoing when the api is killed, through its restarts, with lastSeq replay after", async () => {
    const sessionId = await runningSession(runner);
    const first = await reopenedUntilHanded(runner, sessionId);
    await runner.stopApi("SIGKILL");
    const afterKill = await typed(first, "api-gone");
    expect(textOf(afterKill)).toContain("api-gone\r\napi-gone");

    // A restarted api opens the channel again (the supervisor's end is opened anew), and hands over again.
    await runner.startApi();
    const second = await reopenedUntilHanded(runner, sessionId);
    await runner.stopApi("SIGKILL");
    await typed(second, "second-api-gone");
    await typed(first, "first-still-here");

    await runner.startApi();
    const cursor = afterKill.at(-1)!.seq;
    const resumed = runner.client.terminal(sessionId, { lastSeq: cursor });
    const replayed = await framesUntilText(resumed, "first-still-here\r\nfirst-still-here");
    expect(replayed[0]).toMatchObject({ kind: "control", message: { type: "seq", seq: cursor } });
    const seqs = byteFrames(replayed).map((frame) => frame.seq);
    expect(seqs).toEqual(seqs.map((_, index) => cursor + 1 + index));
    for (const terminal of [first, second, resumed]) terminal.close();
  });

  it("leaves the api no descriptor of a terminal it handed over", async () => {
    const sessionId = await runningSession(runner);
    await reopenedUntilHanded(runner, sessionId).then((terminal) => terminal.close());
    const [apiPid] = runner.pids();
    const descriptors = async () => (await readdir(`/proc/${apiPid}/fd`)).length;
    const before = await descriptors();
    const handedBefore = await handedCount(runner);
    const terminals = [];
    for (let index = 0; index < 20; index++) terminals.push(await handedTerminal(runner, sessionId, `many-${index}`));
    expect(await handedCount(runner)).toBe(handedBefore + 20);
    // Twenty live terminals, and not one of their sockets is the api's.
    expect(await descriptors()).toBeLessThanOrEqual(before + 2);
    for (const terminal of terminals) terminal.close();
  });

  it("is closed by the supervisor with 1012 when it stops, and handed over again once it is back", async () => {
    const sessionId = await runningSession(runner);
    const terminal = await reopenedUntilHanded(runner, sessionId);
    const drained = framesToClose(terminal);
    await runner.stopSupervisor("SIGTERM");
    await drained;
    expect((await terminal.closed).code).toBe(1012);

    await runner.startSupervisor();
    const again = await reopenedUntilHanded(runner, sessionId);
    again.close();
  });

  it("ends the client's connection when the supervisor holding it is killed", async () => {
    const sessionId = await runningSession(runner);
    const terminal = await reopenedUntilHanded(runner, sessionId);
    const drained = framesToClose(terminal);
    await runner.stopSupervisor("SIGKILL");
    await drained;
    // No process is left to send a close frame: the client sees the connection end (1006), a
    // code the contract's client reconnects on, as it does on 1011.
    expect((await terminal.closed).code).toBe(1006);
    await runner.startSupervisor();
  });
});

/**
 * A terminal the supervisor was handed: the api's channel opens a moment after it starts, and a
 * terminal opened in that moment is spliced, so it is opened again until the supervisor's count
 * of handed terminals (its /metrics, through the api) says this one was.
 */
async function reopenedUntilHanded(runner: KubeRunner, sessionId: string): Promise<Terminal> {
  return waitFor("a terminal handed to the supervisor", async () => {
    const before = await handedCount(runner);
    const terminal = await handedTerminal(runner, sessionId, `probe-${Date.now()}`);
    if ((await handedCount(runner)) > before) return terminal;
    terminal.close();
    return undefined;
  });
}

async function handedCount(runner: KubeRunner): Promise<number> {
  const text = await (await fetch(`${runner.baseUrl}/metrics`)).text();
  return Number(/^runner_terminals_opened_total\{path="handed"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
}
