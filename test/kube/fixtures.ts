/** Shared inputs of the builder tests, and the admission checks every built object must pass. */
import { expect } from "vitest";
import type { SessionPodSettings } from "../../src/config/kube.ts";
import type { SessionFacts } from "../../src/kube/specs/pod-common.ts";
import { podSecurityViolations, type PodLike, type PodSecurityLevel } from "../../src/sim/admission/pod-security.ts";
import { validateAgainstSchema } from "../../src/sim/admission/schema.ts";

export const SESSION_ID = "k7m3qx4r2abc";
export const CREATED_AT = "2026-11-29T16:30:00.000Z";

export const PLAIN_SETTINGS: SessionPodSettings = {
  namespace: "telo-sessions",
  managedBy: "telo-k8s-runner",
  ownerId: "default",
  initImage: "busybox:stable",
  imagePullSecret: undefined,
  runtimeClass: undefined,
};

export const FULL_SETTINGS: SessionPodSettings = {
  ...PLAIN_SETTINGS,
  imagePullSecret: "registry-pull",
  runtimeClass: "gvisor",
};

export const RUN_LIMITS = { cpu: "500m", memory: "512Mi", ephemeralStorage: "1Gi", ttlSeconds: 3600 };
export const APP_LIMITS = { cpu: "500m", memory: "512Mi", ephemeralStorage: "1Gi", ttlSeconds: 21600 };

export function runSession(overrides: Partial<SessionFacts> = {}): SessionFacts {
  return {
    sessionId: SESSION_ID,
    mode: "run",
    createdAt: CREATED_AT,
    apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
    inspect: false,
    selfContained: false,
    config: { image: "telorun/node:0.14.0-slim", pullPolicy: "missing" },
    ...overrides,
  };
}

/** The object is valid against the official Kubernetes (or Gateway API CRD) schema. */
export function expectSchemaValid(obj: { apiVersion?: string; kind?: string }): void {
  expect(validateAgainstSchema(obj)).toEqual([]);
}

/**
 * The pod violations of `level` (empty = admitted). The cast: client-node's V1Volume has no
 * index signature, so a V1Pod does not structurally match PodLike's `Record` volumes.
 */
export function violations(level: PodSecurityLevel, pod: object): string[] {
  return podSecurityViolations(level, pod as PodLike);
}

/** The pod would be admitted by a namespace enforcing `level`. */
export function expectAdmitted(level: PodSecurityLevel, pod: object): void {
  expect(violations(level, pod)).toEqual([]);
}
