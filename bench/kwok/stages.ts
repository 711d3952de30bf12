/**
 * kwok's Stages for the kwok section: what its fake kubelet does to a node and to a pod. kwok
 * ships none by itself (it refuses to start without), so the section gives the three it needs:
 * a fake node turns Ready on its loopback address; a scheduled pod turns Running at once (init
 * containers completed, every container running, an IP from its node's podCIDR); a pod being
 * deleted is removed. Nothing ever ends a container, as a session that keeps running would.
 * The status templates are Go templates over the object, with kwok's functions (Now, NodeIP,
 * NodePort, NodeIPsWith, PodIPsWith, Quote).
 */

const nodeReady = {
  apiVersion: "kwok.x-k8s.io/v1alpha1",
  kind: "Stage",
  metadata: { name: "bench-node-ready" },
  spec: {
    resourceRef: { apiGroup: "v1", kind: "Node" },
    selector: { matchExpressions: [{ key: '.status.conditions.[] | select( .type == "Ready" ) | .status', operator: "NotIn", values: ["True"] }] },
    next: {
      statusTemplate: [
        "{{ $now := Now }}",
        "conditions:",
        "- type: Ready",
        '  status: "True"',
        "  reason: KubeletReady",
        "  message: kwok plays this node's kubelet",
        "  lastHeartbeatTime: {{ $now | Quote }}",
        "  lastTransitionTime: {{ $now | Quote }}",
        "addresses:",
        "- type: InternalIP",
        "  address: {{ NodeIP | Quote }}",
        "- type: Hostname",
        "  address: {{ .metadata.name | Quote }}",
        "daemonEndpoints:",
        "  kubeletEndpoint:",
        "    Port: {{ NodePort }}",
        "phase: Running",
      ].join("\n"),
    },
  },
};

const podRunning = {
  apiVersion: "kwok.x-k8s.io/v1alpha1",
  kind: "Stage",
  metadata: { name: "bench-pod-running" },
  spec: {
    resourceRef: { apiGroup: "v1", kind: "Pod" },
    selector: {
      matchExpressions: [
        { key: ".metadata.deletionTimestamp", operator: "DoesNotExist" },
        { key: ".spec.nodeName", operator: "Exists" },
        { key: ".status.phase", operator: "In", values: ["Pending"] },
      ],
    },
    next: {
      statusTemplate: [
        "{{ $now := Now }}",
        "phase: Running",
        "startTime: {{ $now | Quote }}",
        "conditions:",
        ...["Initialized", "ContainersReady", "Ready", "PodScheduled"].flatMap((type) => [`- type: ${type}`, '  status: "True"', "  lastTransitionTime: {{ $now | Quote }}"]),
        "initContainerStatuses:",
        "{{ range .spec.initContainers }}",
        "- name: {{ .name | Quote }}",
        "  image: {{ .image | Quote }}",
        "  ready: true",
        "  restartCount: 0",
        "  state:",
        "    terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} }",
        "{{ end }}",
        "containerStatuses:",
        "{{ range .spec.containers }}",
        "- name: {{ .name | Quote }}",
        "  image: {{ .image | Quote }}",
        "  ready: true",
        "  started: true",
        "  restartCount: 0",
        "  state:",
        "    running: { startedAt: {{ $now | Quote }} }",
        "{{ end }}",
        "{{ with NodeIPsWith .spec.nodeName }}",
        "hostIP: {{ index . 0 | Quote }}",
        "hostIPs:",
        "{{ range . }}",
        "- ip: {{ . | Quote }}",
        "{{ end }}",
        "{{ end }}",
        '{{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}',
        "podIP: {{ index . 0 | Quote }}",
        "podIPs:",
        "{{ range . }}",
        "- ip: {{ . | Quote }}",
        "{{ end }}",
        "{{ end }}",
      ].join("\n"),
    },
  },
};

const podDeleted = {
  apiVersion: "kwok.x-k8s.io/v1alpha1",
  kind: "Stage",
  metadata: { name: "bench-pod-deleted" },
  spec: {
    resourceRef: { apiGroup: "v1", kind: "Pod" },
    selector: { matchExpressions: [{ key: ".metadata.deletionTimestamp", operator: "Exists" }] },
    next: { delete: true },
  },
};

/**
 * kwok's `--config` file: the stages as YAML documents (JSON is YAML). Its options stay at their
 * defaults (four status patches at a time): with sixteen, a pod's stage was sometimes applied
 * twice before kwok saw the first patch, and the second, adding a second IP, was refused (422).
 */
export function kwokStagesConfig(): string {
  return [nodeReady, podRunning, podDeleted].map((document) => JSON.stringify(document)).join("\n---\n");
}
