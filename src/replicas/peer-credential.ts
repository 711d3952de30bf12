/**
 * The replicas' shared peer credential when the operator sets none (RUNNER_PEER_SECRET unset):
 * kept in a Secret of the session namespace, made by whichever replica starts first. A create
 * that loses the race (409) reads the winner's, so every replica ends with the same value.
 */
import { randomBytes } from "node:crypto";
import type { CoreV1Api } from "@kubernetes/client-node";
import { isConflict, isNotFound } from "../kube/status/api-error.ts";

const KEY = "credential";

export async function sharedPeerCredential(
  api: { core: CoreV1Api },
  namespace: string,
  name: string,
  labels: Record<string, string>,
): Promise<string> {
  const existing = await readCredential(api, namespace, name);
  if (existing !== undefined) return existing;
  const credential = randomBytes(32).toString("base64url");
  try {
    await api.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name, labels }, type: "Opaque", data: { [KEY]: Buffer.from(credential).toString("base64") } },
    });
    return credential;
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
  const winner = await readCredential(api, namespace, name);
  if (winner === undefined) throw new Error(`the peer credential Secret ${namespace}/${name} was created by another replica but cannot be read`);
  return winner;
}

async function readCredential(api: { core: CoreV1Api }, namespace: string, name: string): Promise<string | undefined> {
  try {
    const secret = await api.core.readNamespacedSecret({ namespace, name });
    const encoded = secret.data?.[KEY];
    if (encoded === undefined) throw new Error(`the peer credential Secret ${namespace}/${name} has no '${KEY}' key`);
    return Buffer.from(encoded, "base64").toString("utf8");
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
