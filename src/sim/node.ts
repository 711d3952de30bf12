// The one node of the simulated cluster, registered by the kubelet: what `kubectl get nodes`
// and `kubectl describe pod` show pods are bound to.
import { type KubeObject, newUid, timestamp } from "./object.ts";

export const NODE_NAME = "sim-node";
export const HOST_IP = "127.0.0.1";

/** The one node the kubelet registers, as `kubectl get nodes` and `describe pod` show it. */
export function nodeObject(): KubeObject {
  const now = timestamp();
  const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now });
  const capacity = { cpu: "64", memory: "256Gi", pods: "5000", "ephemeral-storage": "1Ti" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: NODE_NAME, uid: newUid(), creationTimestamp: now, labels: { "kubernetes.io/hostname": NODE_NAME, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64" } },
    spec: {},
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
      ],
      addresses: [
        { type: "InternalIP", address: HOST_IP },
        { type: "Hostname", address: NODE_NAME },
      ],
      nodeInfo: {
        kubeletVersion: "v1.32.0-sim",
        containerRuntimeVersion: "containerd://sim",
        operatingSystem: "linux",
        architecture: "amd64",
        osImage: "k8s-runner simulated node",
        kernelVersion: "",
        machineID: "",
        systemUUID: "",
        bootID: "",
        kubeProxyVersion: "",
      },
    },
  };
}
