/**
 * What the pod watch's cache keeps of a pod (to bound its memory): the cache holds every live
 * session's pod for as long as the session lives, and a full pod object carries much the
 * supervisor never reads — managedFields, security contexts, resources, commands, probes,
 * volume mounts. Kept: all the metadata but managedFields (names, labels, the session record
 * annotation, timestamps), the status whole (every start and end decision reads it), and of the
 * spec the node name and each container's name, image, env and ports (adoption rebuilds a
 * session's launch description from them; see backend.ts specFromRecord). agent-sandbox trims
 * its pod cache the same way.
 */
import type { V1Container, V1Pod } from "@kubernetes/client-node";

export function trimPod(pod: V1Pod): V1Pod {
  const { managedFields: _dropped, ...metadata } = pod.metadata ?? {};
  const spec = pod.spec;
  return {
    ...(pod.apiVersion !== undefined && { apiVersion: pod.apiVersion }),
    ...(pod.kind !== undefined && { kind: pod.kind }),
    metadata,
    ...(spec && {
      spec: {
        ...(spec.nodeName !== undefined && { nodeName: spec.nodeName }),
        containers: spec.containers.map(trimContainer),
      },
    }),
    ...(pod.status && { status: pod.status }),
  };
}

function trimContainer(container: V1Container): V1Container {
  return {
    name: container.name,
    ...(container.image !== undefined && { image: container.image }),
    ...(container.env !== undefined && { env: container.env }),
    ...(container.ports !== undefined && { ports: container.ports }),
  };
}
