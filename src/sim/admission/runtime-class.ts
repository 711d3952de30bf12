// The RuntimeClass admission plugin's refusal: a pod naming a RuntimeClass the cluster does not
// have is forbidden at once (mutating admission, so before validation), with the plugin's words.
// The overhead and scheduling constraints a RuntimeClass can carry are not applied.
import type { KubeObject } from "../object.ts";
import { lookupType } from "../resources.ts";
import { forbidden } from "../status.ts";
import type { Store } from "../store.ts";

const RUNTIME_CLASS = lookupType("node.k8s.io", "v1", "runtimeclasses")!;

export function admitRuntimeClass(store: Store, pod: KubeObject): void {
  const name = pod.spec?.runtimeClassName;
  if (typeof name !== "string" || store.get(RUNTIME_CLASS, undefined, name)) return;
  throw forbidden({ group: "", plural: "pods" }, pod.metadata.name, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`);
}
