import { describe, expect, it } from "vitest";
import { appPod, type AppPodInput } from "../../../src/kube/specs/app-pod.ts";
import { parseSessionRecord } from "../../../src/kube/specs/session-record.ts";
import {
  APP_LIMITS,
  PLAIN_SETTINGS,
  runSession,
  SESSION_ID,
  violations,
} from "../fixtures.ts";

function input(overrides: Partial<AppPodInput> = {}): AppPodInput {
  return {
    session: runSession({
      selfContained: true,
      config: { image: "ghcr.io/acme/notebook:1.2.0", pullPolicy: "always" },
      apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [{ port: 8888, protocol: "tcp" }], io: "tty" }],
    }),
    env: { NOTEBOOK_TOKEN: "operator-secret", THEME: "dark" },
    settings: PLAIN_SETTINGS,
    limits: APP_LIMITS,
    defaultImage: "telorun/node:latest-slim",
    ...overrides,
  };
}

describe("appPod", () => {
  it("runs the catalog image by its own entrypoint, without bundle, init container or volumes", () => {
    expect(appPod(input())).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `telo-run-${SESSION_ID}`,
        namespace: "telo-sessions",
        labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "default", "telo.run/session-id": SESSION_ID },
        annotations: { "telo.run/session": expect.any(String) },
      },
      spec: {
        restartPolicy: "Never",
        activeDeadlineSeconds: 21600,
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "session",
            image: "ghcr.io/acme/notebook:1.2.0",
            imagePullPolicy: "Always",
            env: [
              { name: "NOTEBOOK_TOKEN", value: "operator-secret" },
              { name: "THEME", value: "dark" },
              { name: "FORCE_COLOR", value: "1" },
            ],
            stdin: true,
            stdinOnce: false,
            tty: true,
            terminationMessagePolicy: "FallbackToLogsOnError",
            ports: [{ containerPort: 8888, protocol: "TCP" }],
            resources: {
              limits: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "1Gi" },
              requests: { cpu: "500m", memory: "512Mi" },
            },
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          },
        ],
      },
    });
  });

  it("records the env names but not the operator's values", () => {
    const pod = appPod(input());
    expect(pod.metadata?.annotations?.["telo.run/session"]).not.toContain("operator-secret");
    expect(parseSessionRecord(pod)?.envNames).toEqual(["NOTEBOOK_TOKEN", "THEME"]);
    expect(parseSessionRecord(pod)?.selfContained).toBe(true);
  });

  it("would be refused under `restricted` with the reference's seccomp-only pod context", () => {
    const pod = appPod(input());
    const reference = { ...pod, spec: { ...pod.spec, securityContext: { seccompProfile: { type: "RuntimeDefault" } } } };
    expect(violations("restricted", reference)).toEqual([
      'runAsNonRoot != true (pod or container "session" must set securityContext.runAsNonRoot=true)',
    ]);
  });
});
