/**
 * The content-addressed workspace-app ConfigMap every watch pod mounts (docs/kubernetes.md "ConfigMaps").
 */
import { SessionStartError } from "../../sessions/backend-seam.ts";
import { withDeadline } from "../cluster/api.ts";
import type { KubeContext } from "../context.ts";
import { workspaceConfigMap } from "../specs/workspace-configmap.ts";
import { apiFailureMessage, isConflict, isNotFound } from "../status/api-error.ts";
import { WORKSPACE_APP_MANIFEST } from "../workspace-app/manifest.ts";
import { CALL_DEADLINE_MS } from "../cluster/pod-calls.ts";

/** Read → present → done; 404 → create, where a 409 means a concurrent creator wrote the same bytes. Never updated. */
export async function ensureWorkspaceConfigMap(ctx: KubeContext): Promise<void> {
  const { namespace, managedBy, ownerId } = ctx.config.sessionPods;
  const body = workspaceConfigMap({ manifest: WORKSPACE_APP_MANIFEST, namespace, managedBy, ownerId });
  const name = body.metadata!.name!;
  try {
    await withDeadline(ctx.api.core.readNamespacedConfigMap({ name, namespace }), CALL_DEADLINE_MS, `reading ConfigMap ${name}`);
    return;
  } catch (error) {
    if (!isNotFound(error)) {
      throw new SessionStartError("create", apiFailureMessage("could not read the workspace-app ConfigMap", error), { cause: error });
    }
  }
  try {
    await withDeadline(ctx.api.core.createNamespacedConfigMap({ namespace, body }), CALL_DEADLINE_MS, `creating ConfigMap ${name}`);
  } catch (error) {
    if (!isConflict(error)) {
      throw new SessionStartError("create", apiFailureMessage("could not create the workspace-app ConfigMap", error), { cause: error });
    }
  }
}
