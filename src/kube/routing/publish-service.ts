/** The session Service (docs/kubernetes.md "Services and routes"), owned by the session pod. */
import type { PortMapping } from "../../contract/wire.ts";
import type { KubeApi } from "../cluster/api.ts";
import { serviceName } from "../specs/names.ts";
import type { OwnerPod } from "../specs/owner.ts";
import { serviceReplacement } from "../specs/replacement.ts";
import { sessionService } from "../specs/session-service.ts";
import { createOrReplace, timed } from "./calls.ts";

export interface ServicePublishInput {
  sessionId: string;
  /** Every port of the session, tcp and udp: all apps' ports plus the agent's. */
  ports: readonly PortMapping[];
  owner: OwnerPod;
  namespace: string;
  managedBy: string;
  ownerId: string;
  /**
   * Watch sessions re-publish over a Service an earlier pod may have created: create-or-replace,
   * keeping the existing resourceVersion and clusterIP(s). Run sessions create it plainly.
   */
  replace: boolean;
}

/** Call it only with at least one port. */
export async function publishService(api: KubeApi, input: ServicePublishInput): Promise<void> {
  const { namespace } = input;
  const name = serviceName(input.sessionId);
  const body = sessionService(input);
  const create = () => timed(api.core.createNamespacedService({ namespace, body }), `creating Service ${name}`);
  if (!input.replace) {
    await create();
    return;
  }
  await createOrReplace({
    create,
    read: () => timed(api.core.readNamespacedService({ name, namespace }), `reading Service ${name}`),
    replace: (existing) =>
      timed(api.core.replaceNamespacedService({ name, namespace, body: serviceReplacement(body, existing) }), `replacing Service ${name}`),
  });
}
