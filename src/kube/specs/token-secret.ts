/**
 * The workload token's Secret (docs/events-and-tokens.md "Workload tokens"): one per session pod,
 * named after the pod, read by the token's container through `valueFrom.secretKeyRef`, so the
 * value is never in the pod spec or its record. Owned by its pod (an owner reference added once
 * the pod exists), so the garbage collector deletes it with the pod. Pure builders and readers.
 */
import type { V1EnvVar, V1Pod, V1Secret } from "@kubernetes/client-node";
import { WORKLOAD_TOKEN_PATTERN } from "../../sessions/workload-token.ts";
import { isOwnedBy, LABEL, sessionLabels, type Stamp } from "./names.ts";
import { type OwnerPod, podOwnerReference } from "./owner.ts";

/** The Secret's one key. */
export const TOKEN_SECRET_KEY = "token";

/** A pod's token Secret is named after the pod: a new pod of a watch session gets its own. */
export function tokenSecretName(podName: string): string {
  return `${podName}-token`;
}

export interface TokenSecretInput {
  podName: string;
  sessionId: string;
  namespace: string;
  stamp: Stamp;
  token: string;
}

/** Immutable: nothing rewrites a token, and the kubelet need not watch an immutable Secret. */
export function tokenSecret(input: TokenSecretInput): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: tokenSecretName(input.podName),
      namespace: input.namespace,
      labels: { ...sessionLabels(input.stamp, input.sessionId), [LABEL.token]: "true" },
    },
    type: "Opaque",
    immutable: true,
    data: { [TOKEN_SECRET_KEY]: Buffer.from(input.token, "utf8").toString("base64") },
  };
}

/** The container's env entry: the value is the kubelet's to resolve, never written here. */
export function tokenEnvVar(envName: string, podName: string): V1EnvVar {
  return { name: envName, valueFrom: { secretKeyRef: { name: tokenSecretName(podName), key: TOKEN_SECRET_KEY } } };
}

/** The Secret made the pod's: the same object with the pod as its only owner. */
export function ownedTokenSecret(secret: V1Secret, owner: OwnerPod): V1Secret {
  return { ...secret, metadata: { ...secret.metadata, ownerReferences: [podOwnerReference(owner)] } };
}

export function isOwnedByPod(secret: V1Secret, uid: string): boolean {
  return (secret.metadata?.ownerReferences ?? []).some((reference) => reference.kind === "Pod" && reference.uid === uid);
}

/** The env name a pod's container reads its token Secret under, when it has one (adoption reads it back). */
export function tokenEnvOf(pod: V1Pod): string | undefined {
  const secretName = tokenSecretName(pod.metadata?.name ?? "");
  for (const container of pod.spec?.containers ?? []) {
    const found = (container.env ?? []).find((variable) => variable.valueFrom?.secretKeyRef?.name === secretName);
    if (found) return found.name;
  }
  return undefined;
}

/** The token a Secret holds, or undefined when it holds none that reads as a token. */
export function tokenOf(secret: V1Secret): string | undefined {
  const encoded = secret.data?.[TOKEN_SECRET_KEY];
  if (encoded === undefined) return undefined;
  const token = Buffer.from(encoded, "base64").toString("utf8");
  return WORKLOAD_TOKEN_PATTERN.test(token) ? token : undefined;
}

/**
 * Token Secrets to delete at boot: this runner's that have no owner yet and that no pod of the
 * namespace reads (a runner that died between the Secret's create and its owner reference left
 * it). An owned one is the garbage collector's, which deletes it with its pod.
 */
export function staleTokenSecrets(secrets: readonly V1Secret[], pods: readonly V1Pod[], stamp: Stamp): string[] {
  const read = new Set<string>();
  for (const pod of pods) {
    for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      for (const variable of container.env ?? []) if (variable.valueFrom?.secretKeyRef?.name) read.add(variable.valueFrom.secretKeyRef.name);
    }
  }
  return secrets
    .filter((secret) => isOwnedBy(stamp, secret) && secret.metadata?.labels?.[LABEL.token] === "true")
    .filter((secret) => (secret.metadata?.ownerReferences ?? []).length === 0)
    .map((secret) => secret.metadata?.name ?? "")
    .filter((name) => name !== "" && !read.has(name));
}
