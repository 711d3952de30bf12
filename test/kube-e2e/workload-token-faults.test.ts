/**
 * A token'd session's start when the cluster refuses one of its calls (docs/events-and-tokens.md
 * "Workload tokens"): the session fails with the reason, and neither its pod nor its token
 * Secret stays behind. Simulator-only: it needs the simulator's fault knobs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubeRunner, SESSION_NAMESPACE, startKubeRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

describe("a token'd session's start under refused calls", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner({ env: { RUNNER_APPS: JSON.stringify({ echo: { image: "acme/echo:1", tokenEnv: "ECHO_TOKEN" } }) } });
  });
  afterAll(async () => {
    await runner?.close();
  });

  const REFUSED = "the Kubernetes API rejected the request (Forbidden, HTTP 403)";

  /** Starts an app session under the fault; its last status, once nothing of it is left on the cluster. */
  const failedStart = async () => {
    const { sessionId } = await runner.client.createAppSession("echo");
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    await waitFor("no pod and no token Secret of the session", async () => {
      const pods = (await runner.sessionPods()).filter((name) => name.includes(sessionId));
      const secrets = (await runner.core.listNamespacedSecret({ namespace: SESSION_NAMESPACE, labelSelector: `telo.run/session-id=${sessionId}` })).items;
      return (pods.length === 0 && secrets.length === 0) || undefined;
    });
    return end;
  };

  it("fails before any pod when the Secret cannot be created", async () => {
    runner.sim.faults.failNext({ verb: "create", resource: "secrets", code: 403 });
    expect(await failedStart()).toEqual({ type: "status", status: { kind: "failed", message: `create: could not create the workload token's Secret: ${REFUSED}` } });
  });

  it("deletes the Secret when the pod cannot be created", async () => {
    runner.sim.faults.failNext({ verb: "create", resource: "pods", code: 403 });
    expect(await failedStart()).toEqual({ type: "status", status: { kind: "failed", message: `create: could not create the session pod: ${REFUSED}` } });
  });

  it("deletes the pod and the Secret when the pod cannot be made the Secret's owner", async () => {
    runner.sim.faults.failNext({ verb: "update", resource: "secrets", code: 403 });
    expect(await failedStart()).toEqual({
      type: "status",
      status: { kind: "failed", message: `create: could not make the session pod the owner of its workload token's Secret: ${REFUSED}` },
    });
  });
});
