/**
 * A predefined-app session (docs/api.md "Apps door"; docs/kubernetes.md "Run pods") on both clusters: the catalog
 * image runs by its own entrypoint, its terminal echoes, and a stop removes the pod. Runs on the
 * simulated cluster in `npm test` and on the real one in `npm run test:cluster`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, framesUntilText, isStatus, textOf } from "../support/streams.ts";

describe(`an app session on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    // The kernel image session bodies name on this cluster; its entrypoint without arguments is an echoing app.
    const image = kubeSessionBody().config?.image ?? "";
    runner = await startClusterRunner({ env: { RUNNER_APPS: JSON.stringify({ echo: { image, pullPolicy: "missing" } }) } });
  });
  afterAll(async () => {
    await runner?.close();
  });

  it("runs the catalog image, echoes its terminal, and is gone after a stop", async () => {
    const { sessionId } = await runner.client.createAppSession("echo");
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    expect(await runner.sessionPods()).toEqual([`telo-run-${sessionId}`]);
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("hello app\r");
    expect(textOf(await framesUntilText(terminal, "hello app"))).toContain("hello app");
    terminal.close();
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 60_000);
  });
});
