import { describe, expect, it } from "vitest";
import type { BuildConfig } from "../../../src/config/kube.ts";
import { buildJob, builtImageReference, type BuildJobInput } from "../../../src/kube/specs/build-job.ts";
import { buildContextFiles, dockerfile } from "../../../src/kube/specs/dockerfile.ts";
import { violations } from "../fixtures.ts";

const TAG = "0123456789abcdef0123456789abcdef";
const CONTEXT_URL = `http://k8s-runner.telo-runner.svc:8063/internal/bundles/build-${TAG}?token=${"cd".repeat(24)}`;

const BUILD: BuildConfig = {
  repository: "registry.example.com/telo-sessions",
  namespace: "telo-builds",
  builderImage: "gcr.io/kaniko-project/executor:latest",
  timeoutSeconds: 600,
  insecureRegistry: false,
  registryApiUrl: undefined,
  pushSecret: undefined,
};

function input(build: Partial<BuildConfig> = {}): BuildJobInput {
  return {
    build: { ...BUILD, ...build },
    managedBy: "telo-k8s-runner",
    ownerId: "runner-a",
    initImage: "busybox:stable",
    tag: TAG,
    contextUrl: CONTEXT_URL,
  };
}

describe("buildJob", () => {
  it("builds the single-attempt, self-cleaning Kaniko Job", () => {
    const labels = { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "runner-a", "telo.run/build": "true" };
    expect(buildJob(input())).toEqual({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: `telo-build-${TAG}`, namespace: "telo-builds", labels },
      spec: {
        backoffLimit: 0,
        activeDeadlineSeconds: 600,
        ttlSecondsAfterFinished: 300,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: "Never",
            automountServiceAccountToken: false,
            initContainers: [
              {
                name: "context-fetch",
                image: "busybox:stable",
                command: ["sh", "-c"],
                args: ['set -e; wget -qO /tmp/archive.tgz "$ARCHIVE_URL"; tar xzf /tmp/archive.tgz -C /workspace'],
                env: [{ name: "ARCHIVE_URL", value: CONTEXT_URL }],
                resources: { limits: { cpu: "50m", memory: "64Mi" }, requests: { cpu: "50m", memory: "64Mi" } },
                volumeMounts: [
                  { name: "context", mountPath: "/workspace" },
                  { name: "tmp", mountPath: "/tmp" },
                ],
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  runAsNonRoot: true,
                  runAsUser: 1000,
                  capabilities: { drop: ["ALL"] },
                },
              },
            ],
            containers: [
              {
                name: "kaniko",
                image: "gcr.io/kaniko-project/executor:latest",
                args: [
                  "--context=dir:///workspace",
                  "--dockerfile=/workspace/Dockerfile",
                  `--destination=registry.example.com/telo-sessions:${TAG}`,
                ],
                resources: { limits: { cpu: "1", memory: "2Gi" }, requests: { cpu: "250m", memory: "512Mi" } },
                volumeMounts: [{ name: "context", mountPath: "/workspace" }],
              },
            ],
            volumes: [
              { name: "context", emptyDir: {} },
              { name: "tmp", emptyDir: {} },
            ],
          },
        },
      },
    });
  });

  it("mounts the push secret as Kaniko's docker config and adds the insecure-registry flags", () => {
    const spec = buildJob(input({ pushSecret: "registry-push", insecureRegistry: true })).spec?.template.spec;
    const kaniko = spec?.containers[0];
    expect(kaniko?.args).toEqual([
      "--context=dir:///workspace",
      "--dockerfile=/workspace/Dockerfile",
      `--destination=registry.example.com/telo-sessions:${TAG}`,
      "--insecure",
      "--skip-tls-verify",
      "--insecure-pull",
      "--skip-tls-verify-pull",
    ]);
    expect(kaniko?.volumeMounts).toEqual([
      { name: "context", mountPath: "/workspace" },
      { name: "docker-config", mountPath: "/kaniko/.docker" },
    ]);
    expect(spec?.volumes?.[2]).toEqual({
      name: "docker-config",
      secret: { secretName: "registry-push", items: [{ key: ".dockerconfigjson", path: "config.json" }] },
    });
  });

  it("needs the build namespace's `baseline` level: Kaniko runs as root", () => {
    expect(violations("restricted", { spec: buildJob(input()).spec?.template.spec })).toContain(
      'runAsNonRoot != true (pod or container "kaniko" must set securityContext.runAsNonRoot=true)',
    );
  });

  it("names the built image <repository>:<tag>", () => {
    expect(builtImageReference("registry.example.com/telo-sessions", TAG)).toBe(`registry.example.com/telo-sessions:${TAG}`);
  });
});

describe("dockerfile", () => {
  it("installs the entry's module closure into the image's own cache", () => {
    expect(dockerfile({ baseImage: "telorun/node:0.14.0-slim", entryRelativePath: "apps/api/telo.yaml" })).toBe(
      [
        "FROM telorun/node:0.14.0-slim",
        "WORKDIR /app",
        "COPY . /app",
        "ENV TELO_CACHE_DIR=/telo-cache",
        'RUN ["telo","install","/app/apps/api/telo.yaml"]',
        "",
      ].join("\n"),
    );
  });

  it("pins a resolved base digest, unless the base is already pinned", () => {
    const digest = "sha256:" + "e".repeat(64);
    expect(dockerfile({ baseImage: "telorun/node:latest-slim", baseDigest: digest, entryRelativePath: "a.yaml" })).toMatch(
      new RegExp(`^FROM telorun/node:latest-slim@${digest}\n`),
    );
    expect(dockerfile({ baseImage: `telorun/node@${digest}`, baseDigest: digest, entryRelativePath: "a.yaml" })).toMatch(
      new RegExp(`^FROM telorun/node@${digest}\n`),
    );
  });

  it("keeps a strange entry path away from any shell", () => {
    expect(dockerfile({ baseImage: "b", entryRelativePath: 'my app/"x"; rm -rf $HOME.yaml' })).toContain(
      'RUN ["telo","install","/app/my app/\\"x\\"; rm -rf $HOME.yaml"]',
    );
  });

  it("puts the generated Dockerfile at the root of the build context, replacing a bundle file of that name", () => {
    expect(
      buildContextFiles(
        [
          { relativePath: "telo.yaml", contents: "kind: Telo.Application" },
          { relativePath: "Dockerfile", contents: "FROM scratch" },
          { relativePath: "docs/Dockerfile", contents: "FROM alpine" },
        ],
        "FROM telorun/node\n",
      ),
    ).toEqual([
      { relativePath: "telo.yaml", contents: "kind: Telo.Application" },
      { relativePath: "docs/Dockerfile", contents: "FROM alpine" },
      { relativePath: "Dockerfile", contents: "FROM telorun/node\n" },
    ]);
  });
});
