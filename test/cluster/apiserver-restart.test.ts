/**
 * The runner's pod watch across a restart of the real apiserver: the new apiserver's watch
 * cache does not hold the runner's resourceVersion, so the resumed watch gets an in-stream 410
 * and the runner must relist, and still see the pod end. Real cluster only: the simulator cannot
 * restart its apiserver; its counterpart is faults.test.ts's forced 410.
 *
 * The restarted apiserver listens before its authorizer has synced and answers the runner's
 * immediate re-attach of the session's terminal with 403: the runner tries again
 * (src/kube/retry/attach-retry.ts) until it is served, so the terminal echoes again. Those
 * 403s are in the audit log; rbac-audit.test.ts tells them from a missing grant.
 */
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, framesUntilText, isStatus } from "../support/streams.ts";

describe("the real apiserver restarted under a live session", () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner();
  });
  afterAll(async () => {
    await runner?.close();
  });

  it("relists and still sees the pod end", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const restarted = await fetch(`${inject("realCluster").controlUrl}/apiserver/restart`, { method: "POST" });
    expect(restarted.status).toBe(204);
    // ^D on the terminal ends the stand-in's stdin, so the application exits 0 after the restart.
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("still here\r");
    await framesUntilText(terminal, "still here");
    await terminal.send("\x04");
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "exited", code: 0 } });
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined, 60_000);
  });
});
