import { describe, expect, it } from "vitest";
import { runPod, type RunPodInput } from "../../../src/kube/specs/run-pod.ts";
import { parseSessionRecord } from "../../../src/kube/specs/session-record.ts";
import {
  FULL_SETTINGS,
  PLAIN_SETTINGS,
  RUN_LIMITS,
  runSession,
  SESSION_ID,
} from "../fixtures.ts";

const BUNDLE_URL = `http://k8s-runner.telo-runner.svc:8063/internal/bundles/${SESSION_ID}?token=${"ab".repeat(24)}`;

function input(overrides: Partial<RunPodInput> = {}): RunPodInput {
  return {
    session: runSession(),
    env: { GREETING: "hello", API_KEY: "s3cret" },
    settings: PLAIN_SETTINGS,
    limits: RUN_LIMITS,
    defaultImage: "telorun/node:latest-slim",
    bundleUrl: BUNDLE_URL,
    ...overrides,
  };
}

const HARDENED = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
};

describe("runPod", () => {
  it("builds the plain kernel-image run pod", () => {
    const pod = runPod(input());
    expect(pod).toEqual({
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
        activeDeadlineSeconds: 3600,
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: {
          runAsNonRoot: true,
          runAsUser: 1000,
          runAsGroup: 1000,
          fsGroup: 1000,
          seccompProfile: { type: "RuntimeDefault" },
        },
        initContainers: [
          {
            name: "body-fetch",
            image: "busybox:stable",
            command: ["sh", "-c"],
            args: ['set -e; wget -qO /tmp/archive.tgz "$ARCHIVE_URL"; tar xzf /tmp/archive.tgz -C /app'],
            env: [{ name: "ARCHIVE_URL", value: BUNDLE_URL }],
            resources: { limits: { cpu: "50m", memory: "64Mi" }, requests: { cpu: "50m", memory: "64Mi" } },
            volumeMounts: [
              { name: "app", mountPath: "/app" },
              { name: "tmp", mountPath: "/tmp" },
            ],
            securityContext: HARDENED,
          },
        ],
        containers: [
          {
            name: "session",
            image: "telorun/node:0.14.0-slim",
            imagePullPolicy: "IfNotPresent",
            workingDir: "/work",
            command: ["telo", "run", "/app/telo.yaml"],
            env: [
              { name: "GREETING", value: "hello" },
              { name: "API_KEY", value: "s3cret" },
              { name: "NODE_OPTIONS", value: "--report-exclude-network" },
              { name: "TELO_CACHE_DIR", value: "/telo-cache" },
              { name: "HOME", value: "/home/telo" },
              { name: "npm_config_cache", value: "/home/telo/.npm" },
              { name: "npm_config_update_notifier", value: "false" },
              { name: "FORCE_COLOR", value: "1" },
            ],
            stdin: true,
            stdinOnce: false,
            tty: true,
            terminationMessagePolicy: "FallbackToLogsOnError",
            resources: {
              limits: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "1Gi" },
              requests: { cpu: "500m", memory: "512Mi" },
            },
            volumeMounts: [
              { name: "app", mountPath: "/app" },
              { name: "telo-cache", mountPath: "/telo-cache" },
              { name: "work", mountPath: "/work" },
              { name: "home", mountPath: "/home/telo" },
              { name: "tmp", mountPath: "/tmp" },
            ],
            securityContext: HARDENED,
          },
        ],
        volumes: [
          { name: "app", emptyDir: {} },
          { name: "telo-cache", emptyDir: {} },
          { name: "work", emptyDir: {} },
          { name: "home", emptyDir: {} },
          { name: "tmp", emptyDir: {} },
        ],
      },
    });
  });

  it("carries the session record with env names only, never values", () => {
    const pod = runPod(input());
    expect(pod.metadata?.annotations?.["telo.run/session"]).not.toContain("s3cret");
    expect(parseSessionRecord(pod)).toEqual({ ...runSession(), envNames: ["GREETING", "API_KEY"] });
  });

  it("adds the inspector options before the manifest path, and the declared ports", () => {
    const session = runSession({
      inspect: true,
      apps: [
        {
          name: "app",
          entryRelativePath: "apps/api/telo.yaml",
          ports: [
            { port: 8080, protocol: "tcp" },
            { port: 5353, protocol: "udp" },
          ],
          io: "tty",
        },
      ],
    });
    const [container] = runPod(input({ session })).spec?.containers ?? [];
    expect(container?.command).toEqual([
      "telo",
      "run",
      "--inspect",
      "0.0.0.0:9230",
      "--no-open",
      "/app/apps/api/telo.yaml",
    ]);
    expect(container?.ports).toEqual([
      { containerPort: 8080, protocol: "TCP" },
      { containerPort: 5353, protocol: "UDP" },
    ]);
  });

  it("adds the pull secret and runtime class only when configured", () => {
    const spec = runPod(input({ settings: FULL_SETTINGS })).spec;
    expect(spec?.imagePullSecrets).toEqual([{ name: "registry-pull" }]);
    expect(spec?.runtimeClassName).toBe("gvisor");
  });

  it("maps the config pull policy and falls back to the default image", () => {
    const always = runPod(input({ session: runSession({ config: { image: "telorun/node:0.14.0", pullPolicy: "always" } }) }));
    expect(always.spec?.containers[0]).toMatchObject({ image: "telorun/node:0.14.0", imagePullPolicy: "Always" });
    const never = runPod(input({ session: runSession({ config: { pullPolicy: "never" } }) }));
    expect(never.spec?.containers[0]).toMatchObject({ image: "telorun/node:latest-slim", imagePullPolicy: "Never" });
    const unset = runPod(input({ session: runSession({ config: {} }) }));
    expect(unset.spec?.containers[0]?.imagePullPolicy).toBe("IfNotPresent");
  });

  it("on the build path runs the built image over its own read-only module cache", () => {
    const pod = runPod(input({ builtImage: "registry.example.com/telo-sessions:0123456789abcdef0123456789abcdef" }));
    const [container] = pod.spec?.containers ?? [];
    expect(container).toMatchObject({
      image: "registry.example.com/telo-sessions:0123456789abcdef0123456789abcdef",
      imagePullPolicy: "IfNotPresent",
      command: ["telo", "run", "--no-cache-write", "/app/telo.yaml"],
    });
    expect(container?.volumeMounts?.map((m) => m.name)).toEqual(["app", "work", "home", "tmp"]);
    expect(pod.spec?.volumes?.map((v) => v.name)).toEqual(["app", "work", "home", "tmp"]);
  });
});
