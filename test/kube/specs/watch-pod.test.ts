import type { CatalogEntry } from "../../../src/config/apps-catalog.ts";
import { describe, expect, it } from "vitest";
import { parseSessionRecord } from "../../../src/kube/specs/session-record.ts";
import { watchPod, type WatchPodInput } from "../../../src/kube/specs/watch-pod.ts";
import {
  APP_LIMITS,
  CREATED_AT,
  PLAIN_SETTINGS,
  SESSION_ID,
} from "../fixtures.ts";
import type { SessionFacts } from "../../../src/kube/specs/pod-common.ts";

const CONFIGMAP = "telo-workspace-app-0123456789ab";

const RESOURCES = {
  limits: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "1Gi" },
  requests: { cpu: "500m", memory: "512Mi" },
};
const HARDENED = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
};

function scratch(owner: string) {
  return [
    { name: "work", mountPath: "/work", subPath: owner },
    { name: "home", mountPath: "/home/telo", subPath: owner },
    { name: "tmp", mountPath: "/tmp", subPath: owner },
  ];
}

function watchSession(apps: SessionFacts["apps"]): SessionFacts {
  return {
    sessionId: SESSION_ID,
    mode: "watch",
    createdAt: CREATED_AT,
    apps,
    inspect: true,
    selfContained: false,
    config: { image: "telorun/node:0.14.0-slim", pullPolicy: "missing" },
  };
}

const TWO_APPS: SessionFacts["apps"] = [
  { name: "api", entryRelativePath: "api/telo.yaml", ports: [{ port: 8080, protocol: "tcp" }], io: "tty" },
  { name: "worker", entryRelativePath: "worker/telo.yaml", ports: [], io: "streams" },
];

const AGENT: CatalogEntry = {
  name: "claude",
  image: "ghcr.io/acme/agent:2.0.0",
  env: { AGENT_TOKEN: "operator-secret" },
  pullPolicy: "always",
  port: 7681,
};

function input(overrides: Partial<WatchPodInput> = {}): WatchPodInput {
  return {
    session: watchSession(TWO_APPS),
    env: { GREETING: "hello" },
    settings: PLAIN_SETTINGS,
    limits: APP_LIMITS,
    ttlSeconds: 21600,
    defaultImage: "telorun/node:latest-slim",
    nameSuffix: "mihq0x2o1",
    workspaceConfigMap: CONFIGMAP,
    ...overrides,
  };
}

describe("watchPod", () => {
  it("builds the workspace, one container per app and the agent, in that order", () => {
    expect(watchPod(input({ agent: AGENT }))).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `telo-watch-${SESSION_ID}-mihq0x2o1`,
        namespace: "telo-sessions",
        labels: {
          "app.kubernetes.io/managed-by": "telo-k8s-runner",
          "telo.run/owner": "default",
          "telo.run/session-id": SESSION_ID,
          "telo.run/mode": "watch",
        },
        annotations: { "telo.run/session": expect.any(String) },
      },
      spec: {
        restartPolicy: "Never",
        activeDeadlineSeconds: 21600,
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: {
          runAsNonRoot: true,
          runAsUser: 1000,
          runAsGroup: 1000,
          fsGroup: 1000,
          seccompProfile: { type: "RuntimeDefault" },
        },
        containers: [
          {
            name: "workspace",
            image: "telorun/node:0.14.0-slim",
            imagePullPolicy: "IfNotPresent",
            workingDir: "/work",
            command: ["telo", "run", "/opt/telo-workspace/telo.yaml"],
            env: [
              { name: "PORT", value: "8099" },
              { name: "WORKSPACE_DIR", value: "/workspace" },
              { name: "TELO_CACHE_DIR", value: "/telo-cache/workspace" },
              { name: "HOME", value: "/home/telo" },
              { name: "npm_config_cache", value: "/home/telo/.npm" },
              { name: "npm_config_update_notifier", value: "false" },
            ],
            ports: [{ containerPort: 8099, protocol: "TCP" }],
            resources: RESOURCES,
            volumeMounts: [
              { name: "workspace", mountPath: "/workspace" },
              { name: "telo-cache", mountPath: "/telo-cache" },
              { name: "workspace-app", mountPath: "/opt/telo-workspace", readOnly: true },
              ...scratch("workspace"),
            ],
            securityContext: HARDENED,
          },
          {
            name: "app-api",
            image: "telorun/node:0.14.0-slim",
            imagePullPolicy: "IfNotPresent",
            workingDir: "/work",
            command: [
              "sh",
              "-c",
              'while [ ! -f "$TELO_ENTRY" ]; do sleep 0.2; done; exec telo run --watch --inspect "$TELO_INSPECT_ADDR" --no-open "$TELO_ENTRY"',
            ],
            env: [
              { name: "GREETING", value: "hello" },
              { name: "NODE_OPTIONS", value: "--report-exclude-network" },
              { name: "HOME", value: "/home/telo" },
              { name: "npm_config_cache", value: "/home/telo/.npm" },
              { name: "npm_config_update_notifier", value: "false" },
              { name: "TELO_ENTRY", value: "/workspace/api/telo.yaml" },
              { name: "TELO_INSPECT_ADDR", value: "0.0.0.0:9230" },
              { name: "CLICOLOR_FORCE", value: "1" },
            ],
            stdin: true,
            stdinOnce: false,
            tty: true,
            ports: [{ containerPort: 8080, protocol: "TCP" }],
            resources: RESOURCES,
            volumeMounts: [{ name: "workspace", mountPath: "/workspace" }, ...scratch("api")],
            securityContext: HARDENED,
          },
          {
            name: "app-worker",
            image: "telorun/node:0.14.0-slim",
            imagePullPolicy: "IfNotPresent",
            workingDir: "/work",
            command: [
              "sh",
              "-c",
              'while [ ! -f "$TELO_ENTRY" ]; do sleep 0.2; done; exec telo run --watch --inspect "$TELO_INSPECT_ADDR" --no-open "$TELO_ENTRY"',
            ],
            env: [
              { name: "GREETING", value: "hello" },
              { name: "NODE_OPTIONS", value: "--report-exclude-network" },
              { name: "HOME", value: "/home/telo" },
              { name: "npm_config_cache", value: "/home/telo/.npm" },
              { name: "npm_config_update_notifier", value: "false" },
              { name: "TELO_ENTRY", value: "/workspace/worker/telo.yaml" },
              { name: "TELO_INSPECT_ADDR", value: "0.0.0.0:9231" },
            ],
            stdin: true,
            stdinOnce: false,
            tty: false,
            resources: RESOURCES,
            volumeMounts: [{ name: "workspace", mountPath: "/workspace" }, ...scratch("worker")],
            securityContext: HARDENED,
          },
          {
            name: "agent",
            image: "ghcr.io/acme/agent:2.0.0",
            imagePullPolicy: "Always",
            env: [
              { name: "AGENT_TOKEN", value: "operator-secret" },
              { name: "WORKSPACE_DIR", value: "/workspace" },
              { name: "CLICOLOR_FORCE", value: "1" },
            ],
            ports: [{ containerPort: 7681, protocol: "TCP" }],
            resources: RESOURCES,
            volumeMounts: [{ name: "workspace", mountPath: "/workspace" }, ...scratch("agent")],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          },
        ],
        volumes: [
          { name: "workspace", emptyDir: {} },
          { name: "telo-cache", emptyDir: {} },
          { name: "work", emptyDir: {} },
          { name: "home", emptyDir: {} },
          { name: "tmp", emptyDir: {} },
          { name: "workspace-app", configMap: { name: CONFIGMAP } },
        ],
      },
    });
  });

  it("records the session with the agent's name and the session env names only", () => {
    const pod = watchPod(input({ agent: AGENT }));
    expect(pod.metadata?.annotations?.["telo.run/session"]).not.toContain("operator-secret");
    expect(parseSessionRecord(pod)).toEqual({
      ...watchSession(TWO_APPS),
      agent: "claude",
      envNames: ["GREETING"],
    });
    expect(parseSessionRecord(watchPod(input()))?.agent).toBeUndefined();
  });

  it("gives an agent without a declared port no ports", () => {
    const { port: _port, ...portless } = AGENT;
    const agent = watchPod(input({ agent: portless })).spec?.containers.find((c) => c.name === "agent");
    expect(agent?.ports).toBeUndefined();
  });
});
