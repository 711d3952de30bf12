/**
 * The workload token's Secret on the cluster (docs/events-and-tokens.md "Workload tokens"). Order
 * of a start: the Secret first, so the container never waits for it (a `secretKeyRef` to a
 * missing Secret would hold it in CreateContainerConfigError, and the kubelet retries that on
 * a back-off of its own); then the pod; then the pod made the Secret's owner, from which on the
 * garbage collector deletes it with the pod. A start that fails before the owner is set deletes
 * the Secret itself; a runner that dies in between leaves it to the boot sweep.
 */
import type { V1Pod, V1Secret } from "@kubernetes/client-node";
import { SessionStartError, type StartSpec } from "../../sessions/backend-seam.ts";
import type { WorkloadToken } from "../../sessions/workload-token.ts";
import { withDeadline } from "../cluster/api.ts";
import { CALL_DEADLINE_MS } from "../cluster/pod-calls.ts";
import type { KubeContext } from "../context.ts";
import { LABEL, ownedObjects } from "../specs/names.ts";
import type { OwnerPod } from "../specs/owner.ts";
import { settled } from "../boot-housekeeping.ts";
import { isOwnedByPod, ownedTokenSecret, staleTokenSecrets, tokenEnvOf, tokenOf, tokenSecret, tokenSecretName } from "../specs/token-secret.ts";
import { apiFailureMessage, apiReason, isNotFound } from "../status/api-error.ts";
import type { SessionPod } from "./session-pod.ts";

/**
 * Creates a session pod; with a token, its Secret around it as above. Throws a
 * SessionStartError at stage `create`, having deleted what it made (the pod, the Secret).
 */
export async function createSessionPod(ctx: KubeContext, pod: SessionPod, body: V1Pod, spec: Pick<StartSpec, "sessionId" | "token">): Promise<void> {
  if (spec.token === undefined) {
    await pod.create(body);
    return;
  }
  const { namespace, managedBy, ownerId } = ctx.config.sessionPods;
  const secret = tokenSecret({ podName: pod.name, sessionId: spec.sessionId, namespace, stamp: { managedBy, ownerId }, token: spec.token.value });
  const name = secret.metadata!.name!;
  let created: V1Secret;
  try {
    created = await withDeadline(ctx.api.core.createNamespacedSecret({ namespace, body: secret }), CALL_DEADLINE_MS, `creating Secret ${name}`);
  } catch (error) {
    throw new SessionStartError("create", apiFailureMessage("could not create the workload token's Secret", error), { cause: error });
  }
  let uid: string;
  try {
    uid = (await pod.create(body))?.metadata?.uid ?? (await podUid(ctx, pod.name));
  } catch (error) {
    await dropTokenSecret(ctx, name);
    throw error;
  }
  try {
    await withDeadline(
      ctx.api.core.replaceNamespacedSecret({ name, namespace, body: ownedTokenSecret(created, { name: pod.name, uid }) }),
      CALL_DEADLINE_MS,
      `giving Secret ${name} its owner`,
    );
  } catch (error) {
    // Without its owner the Secret would outlive the pod: neither stays.
    await pod.delete().catch((deleteError: unknown) => pod.collect(deleteError));
    await dropTokenSecret(ctx, name);
    throw new SessionStartError("create", apiFailureMessage("could not make the session pod the owner of its workload token's Secret", error), { cause: error });
  }
}

/** The uid of a pod whose create answer was lost (by a list of one name: the manifests grant list on pods, not get). */
async function podUid(ctx: KubeContext, name: string): Promise<string> {
  const namespace = ctx.config.sessionPods.namespace;
  const listed = await withDeadline(ctx.api.core.listNamespacedPod({ namespace, fieldSelector: `metadata.name=${name}` }), CALL_DEADLINE_MS, "reading the created pod");
  const uid = listed.items[0]?.metadata?.uid;
  if (uid === undefined) throw new SessionStartError("create", `the session pod ${name} was created but cannot be read back`);
  return uid;
}

/** Best effort: a Secret left behind is the boot sweep's. */
async function dropTokenSecret(ctx: KubeContext, name: string): Promise<void> {
  try {
    await withDeadline(ctx.api.core.deleteNamespacedSecret({ name, namespace: ctx.config.sessionPods.namespace }), CALL_DEADLINE_MS, `deleting Secret ${name}`);
  } catch (error) {
    if (!isNotFound(error)) ctx.log.warn("could not delete a workload token's Secret; the next boot sweeps it", { name, reason: apiReason(error) });
  }
}

/**
 * A re-adopted session's token, read back from its pod's Secret (and the pod made its owner,
 * should the runner have died before doing so). Undefined when the pod reads none; a Secret
 * that cannot be read is said in the log, and the session's endpoints then carry no token.
 */
export async function adoptedToken(ctx: KubeContext, pod: V1Pod, holder: WorkloadToken["holder"]): Promise<WorkloadToken | undefined> {
  const env = tokenEnvOf(pod);
  if (env === undefined) return undefined;
  const namespace = ctx.config.sessionPods.namespace;
  const owner: OwnerPod = { name: pod.metadata?.name ?? "", uid: pod.metadata?.uid ?? "" };
  const name = tokenSecretName(owner.name);
  // Not `secret`: the log filter redacts any key naming one.
  const fields = { pod: owner.name, object: name };
  let secret: V1Secret;
  try {
    secret = await withDeadline(ctx.api.core.readNamespacedSecret({ name, namespace }), CALL_DEADLINE_MS, `reading Secret ${name}`);
  } catch (error) {
    ctx.log.warn("could not read a re-adopted session's workload token; its endpoints carry none", { ...fields, reason: apiReason(error) });
    return undefined;
  }
  const value = tokenOf(secret);
  if (value === undefined) {
    ctx.log.warn("a re-adopted session's token Secret holds no token; its endpoints carry none", fields);
    return undefined;
  }
  if (!isOwnedByPod(secret, owner.uid)) {
    try {
      await withDeadline(ctx.api.core.replaceNamespacedSecret({ name, namespace, body: ownedTokenSecret(secret, owner) }), CALL_DEADLINE_MS, `giving Secret ${name} its owner`);
    } catch (error) {
      ctx.log.warn("could not make a re-adopted pod the owner of its token Secret", { ...fields, reason: apiReason(error) });
    }
  }
  return { env, value, holder };
}

/**
 * At boot: delete this runner's token Secrets that have no owner and that no pod reads
 * (token-secret.ts says which). Housekeeping only: every failure is a warning.
 */
export async function sweepTokenSecrets(ctx: KubeContext, minAgeMs: number): Promise<void> {
  const stamp = ctx.config.sessionPods;
  const namespace = stamp.namespace;
  const [pods, secrets] = await Promise.allSettled([
    ctx.api.core.listNamespacedPod({ namespace }),
    ctx.api.core.listNamespacedSecret({ namespace, labelSelector: `${ownedObjects(stamp).labelSelector},${LABEL.token}=true` }),
  ]);
  if (pods.status === "rejected" || secrets.status === "rejected") {
    const error = pods.status === "rejected" ? pods.reason : (secrets as PromiseRejectedResult).reason;
    ctx.log.warn("could not sweep workload token Secrets", { reason: apiReason(error) });
    return;
  }
  const stale = staleTokenSecrets(settled(secrets.value.items, Date.now(), minAgeMs), pods.value.items, stamp);
  await Promise.all(stale.map((name) => dropTokenSecret(ctx, name)));
  if (stale.length > 0) ctx.log.info("swept workload token Secrets no pod reads", { count: stale.length });
}
