/** The workload token's Secret and the env entries that read it (src/kube/specs/token-secret.ts). */
import type { V1Pod, V1Secret } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { appPod } from "../../../src/kube/specs/app-pod.ts";
import { parseSessionRecord } from "../../../src/kube/specs/session-record.ts";
import { ownedTokenSecret, staleTokenSecrets, tokenEnvOf, tokenOf, tokenSecret } from "../../../src/kube/specs/token-secret.ts";
import { watchPod } from "../../../src/kube/specs/watch-pod.ts";
import { APP_LIMITS, PLAIN_SETTINGS, runSession, SESSION_ID } from "../fixtures.ts";

const TOKEN = "abcdefghijklmnopqrstuvwxyz234567";
const STAMP = { managedBy: "telo-k8s-runner", ownerId: "default" };

const app = () =>
  appPod({
    session: runSession({ selfContained: true, config: { image: "ghcr.io/acme/app:1" } }),
    env: { THEME: "dark" },
    settings: PLAIN_SETTINGS,
    limits: APP_LIMITS,
    defaultImage: "telorun/node:latest-slim",
    tokenEnv: "APP_TOKEN",
  });

describe("the token Secret", () => {
  it("is named after its pod, labelled as the runner's, immutable, and holds the token under `token`", () => {
    const secret = tokenSecret({ podName: `telo-run-${SESSION_ID}`, sessionId: SESSION_ID, namespace: "telo-sessions", stamp: STAMP, token: TOKEN });
    expect(secret).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: `telo-run-${SESSION_ID}-token`,
        namespace: "telo-sessions",
        labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "default", "telo.run/session-id": SESSION_ID, "telo.run/token": "true" },
      },
      type: "Opaque",
      immutable: true,
      data: { token: Buffer.from(TOKEN).toString("base64") },
    });
    expect(tokenOf(secret)).toBe(TOKEN);
    expect(tokenOf({ data: { token: Buffer.from("not a token").toString("base64") } })).toBeUndefined();
    expect(ownedTokenSecret(secret, { name: "p", uid: "u1" }).metadata?.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Pod", name: "p", uid: "u1", controller: true }]);
  });

  it("is read by the app container through secretKeyRef: no value in the spec, no name in the record", () => {
    const pod = app();
    const env = pod.spec?.containers[0]?.env ?? [];
    expect(env.find((variable) => variable.name === "APP_TOKEN")).toEqual({
      name: "APP_TOKEN",
      valueFrom: { secretKeyRef: { name: `telo-run-${SESSION_ID}-token`, key: "token" } },
    });
    expect(parseSessionRecord(pod)?.envNames).toEqual(["THEME"]);
    expect(tokenEnvOf(pod)).toBe("APP_TOKEN");
  });

  it("is read by the agent container alone, which drops an operator value of the same name", () => {
    const pod = watchPod({
      session: runSession({ mode: "watch", apps: [{ name: "web", entryRelativePath: "w.yaml", ports: [], io: "tty" }] }),
      env: { GREETING: "hi" },
      settings: PLAIN_SETTINGS,
      limits: APP_LIMITS,
      ttlSeconds: 600,
      defaultImage: "telorun/node:latest-slim",
      nameSuffix: "s1",
      workspaceConfigMap: "cm",
      agent: { name: "helper", image: "acme/agent:1", env: { AGENT_TOKEN: "operator value", MODE: "x" }, pullPolicy: "missing", port: 7000 },
      agentTokenEnv: "AGENT_TOKEN",
    });
    const envOf = (name: string) => pod.spec?.containers.find((container) => container.name === name)?.env ?? [];
    expect(envOf("agent").filter((variable) => variable.name === "AGENT_TOKEN")).toEqual([
      { name: "AGENT_TOKEN", valueFrom: { secretKeyRef: { name: `telo-watch-${SESSION_ID}-s1-token`, key: "token" } } },
    ]);
    expect(JSON.stringify(pod)).not.toContain("operator value");
    expect(envOf("app-web").map((variable) => variable.name)).not.toContain("AGENT_TOKEN");
    expect(tokenEnvOf(pod)).toBe("AGENT_TOKEN");
  });

  it("is stale at boot only when it is this runner's, has no owner and no pod reads it", () => {
    const secret = (name: string, extra: Partial<NonNullable<V1Secret["metadata"]>> = {}, ownerId = "default"): V1Secret => ({
      metadata: { name, labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": ownerId, "telo.run/token": "true" }, ...extra },
    });
    const reader: V1Pod = { metadata: { name: `telo-run-${SESSION_ID}` }, spec: app().spec! };
    const secrets = [
      secret("orphan-token"),
      secret(`telo-run-${SESSION_ID}-token`),
      secret("owned-token", { ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "gone", uid: "u" }] }),
      secret("others-token", {}, "another"),
    ];
    expect(staleTokenSecrets(secrets, [reader], STAMP)).toEqual(["orphan-token"]);
  });
});
