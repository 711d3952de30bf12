/**
 * `k8s-runner describe`: the rendering (pure), then the real bin against the runner's two
 * processes on a simulated cluster, where the stages it prints are the session document's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCommandLine } from "../../src/cli/args.ts";
import { renderDescribe, waterfall } from "../../src/cli/describe.ts";
import type { SessionDocument } from "../../src/contract/wire.ts";
import { type KubeRunner, startKubeRunner } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { runCli } from "./cli-process.ts";

const at = (ms: number) => new Date(Date.parse("2026-12-01T10:00:00Z") + ms).toISOString();

const running: SessionDocument = {
  sessionId: "abcdefghijkl",
  status: { kind: "running", endpoints: [{ host: "3000-abcdefghijkl.sessions.example.test", port: 3000, protocol: "tcp", url: "https://3000-abcdefghijkl.sessions.example.test" }] },
  mode: "run",
  apps: [{ name: "app", io: "tty", generation: 1, ports: [{ port: 3000, protocol: "tcp" }], telo: "0.97.0" }],
  createdAt: at(0),
  timeline: [
    { stage: "admitted", at: at(0) },
    { stage: "scheduled", at: at(400), detail: "on node-a" },
    { stage: "container-started", at: at(2400) },
    { stage: "running", at: at(2450) },
  ],
};

describe("renderDescribe", () => {
  it("prints the mode, status, Telo version, endpoints and every stage with its offset and duration", () => {
    expect(renderDescribe(running)).toBe(
      [
        "session    abcdefghijkl",
        "mode       run",
        "status     running",
        "telo       0.97.0 (app)",
        "apps       app (generation 1)",
        `created    ${at(0)}`,
        "endpoints",
        "  tcp/3000  https://3000-abcdefghijkl.sessions.example.test",
        "timeline",
        "  +0 ms      admitted",
        "  +400 ms    scheduled             400 ms  ████                      on node-a",
        "  +2.400 s   container-started    2.000 s      ████████████████████",
        "  +2.450 s   running                50 ms                         █",
      ].join("\n"),
    );
  });

  it("shows a failure's first line and no endpoints once ended", () => {
    const failed: SessionDocument = {
      ...running,
      status: { kind: "failed", message: "start: pod did not reach Running" },
      exitedAt: at(3000),
      timeline: [running.timeline[0]!, { stage: "failed", at: at(3000), detail: "start: pod did not reach Running\nsecond line" }],
    };
    const text = renderDescribe(failed);
    expect(text).toContain("status     failed: start: pod did not reach Running");
    expect(text).toContain(`created    ${at(0)}, ended ${at(3000)}`);
    expect(text).not.toContain("endpoints");
    expect(waterfall(failed.timeline).at(-1)).toMatch(/^ {2}\+3\.000 s {3}failed {6}3\.000 s {2}█{24} {2}start: pod did not reach Running$/);
  });

  it("is a command that takes a session id", () => {
    expect(parseCommandLine(["describe", "abcdefghijkl"], {})).toMatchObject({ ok: true, command: { name: "describe", sessionId: "abcdefghijkl" } });
    expect(parseCommandLine(["describe"], {})).toEqual({ ok: false, message: "'describe' needs <id>" });
  });
});

describe("k8s-runner describe against a runner", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner();
  });
  afterAll(async () => {
    await runner?.close();
  });

  it("prints the document's stages, in its order, and the document itself under --json", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({}, { telo: "0.97.0", config: { simulate: { output: "hi\n", "run-ms": 300 } } }));
    await eventsUntil(runner.client, sessionId, isStatus("exited"));
    const document = await runner.client.getSession(sessionId);
    const human = await runCli(["describe", sessionId], { url: runner.baseUrl });
    expect(human).toMatchObject({ code: 0, stderr: "" });
    expect(human.stdout).toContain("status     exited (code 0)");
    expect(human.stdout).toContain("telo       0.97.0 (app)");
    const printed = human.stdout.split("timeline\n")[1]!.trim().split("\n").map((line) => /^\s*\+[\d.]+ m?s\s+(\S+)/.exec(line)?.[1]);
    expect(printed).toEqual(document.timeline.map((entry) => entry.stage));
    const json = await runCli(["describe", sessionId, "--json"], { url: runner.baseUrl });
    expect(JSON.parse(json.stdout)).toEqual(document);
  });

  it("answers an unknown session with the runner's message and exit 1", async () => {
    const result = await runCli(["describe", "aaaaaaaaaaaa"], { url: runner.baseUrl });
    expect(result).toEqual({ code: 1, stdout: "", stderr: "k8s-runner: runner returned HTTP 404: session 'aaaaaaaaaaaa' not in registry\n" });
  });
});
