/**
 * The Kaniko build Job of the image build path (docs/kubernetes.md "Image builds"). It runs in the build
 * namespace, which enforces the `baseline` Pod Security profile: Kaniko needs a writable root
 * filesystem and root, which `restricted` forbids. The fetch init container needs neither, so
 * it is hardened as far as `restricted` would ask.
 */
import type { V1Container, V1Job, V1ResourceRequirements, V1Volume, V1VolumeMount } from "@kubernetes/client-node";
import type { BuildConfig } from "../../config/kube.ts";
import { DOCKERFILE_PATH } from "./dockerfile.ts";
import { fetchInitContainer } from "./fetch-init.ts";
import { buildJobName, buildLabels } from "./names.ts";

/**
 * A `telo install` of a typical closure fits well within this; the build namespace may carry a
 * ResourceQuota, which requires requests and limits on every container.
 */
const KANIKO_RESOURCES: V1ResourceRequirements = {
  limits: { cpu: "1", memory: "2Gi" },
  requests: { cpu: "250m", memory: "512Mi" },
};

/** Finished Jobs remove themselves; the runner never reaps build Jobs. */
const FINISHED_JOB_TTL_SECONDS = 300;

export interface BuildJobInput {
  build: BuildConfig;
  managedBy: string;
  ownerId: string;
  /** RUNNER_INIT_IMAGE: needs sh, wget and tar. */
  initImage: string;
  /** The 32-hex dependency tag; the Job name and the image tag. */
  tag: string;
  /** Single-use URL of the staged build context (bundle + Dockerfile). */
  contextUrl: string;
}

export function builtImageReference(repository: string, tag: string): string {
  return `${repository}:${tag}`;
}

/** Where the build context (bundle + Dockerfile) is unpacked and Kaniko reads it. */
const CONTEXT_DIR = "/workspace";

const INSECURE_REGISTRY_FLAGS = ["--insecure", "--skip-tls-verify", "--insecure-pull", "--skip-tls-verify-pull"];

export function buildJob(input: BuildJobInput): V1Job {
  const { build } = input;
  const labels = buildLabels(input);
  const contextMount: V1VolumeMount = { name: "context", mountPath: CONTEXT_DIR };

  const contextFetch = fetchInitContainer({
    name: "context-fetch",
    image: input.initImage,
    url: input.contextUrl,
    volume: contextMount.name,
    mountPath: CONTEXT_DIR,
    // emptyDirs are world-writable, so the fetch works as any non-root user.
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 1000,
      capabilities: { drop: ["ALL"] },
    },
  });

  const kaniko: V1Container = {
    name: "kaniko",
    image: build.builderImage,
    args: [
      `--context=dir://${CONTEXT_DIR}`,
      `--dockerfile=${CONTEXT_DIR}/${DOCKERFILE_PATH}`,
      `--destination=${builtImageReference(build.repository, input.tag)}`,
      ...(build.insecureRegistry ? INSECURE_REGISTRY_FLAGS : []),
    ],
    resources: KANIKO_RESOURCES,
    volumeMounts: [
      contextMount,
      ...(build.pushSecret ? [{ name: "docker-config", mountPath: "/kaniko/.docker" }] : []),
    ],
  };

  const volumes: V1Volume[] = [
    { name: "context", emptyDir: {} },
    { name: "tmp", emptyDir: {} },
    ...(build.pushSecret
      ? [
          {
            name: "docker-config",
            secret: { secretName: build.pushSecret, items: [{ key: ".dockerconfigjson", path: "config.json" }] },
          },
        ]
      : []),
  ];

  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: buildJobName(input.tag), namespace: build.namespace, labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: build.timeoutSeconds,
      ttlSecondsAfterFinished: FINISHED_JOB_TTL_SECONDS,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          initContainers: [contextFetch],
          containers: [kaniko],
          volumes,
        },
      },
    },
  };
}
