// Defaulting the apiserver applies on create (and the fields its registries fill in), so objects
// read back look like a real cluster's: clients such as kubectl and the runner read them.
import type { KubeObject } from "./object.ts";

function imagePullPolicy(image: string | undefined): string {
  if (!image) return "IfNotPresent";
  if (image.includes("@")) return "IfNotPresent";
  const lastSegment = image.slice(image.lastIndexOf("/") + 1);
  const tag = lastSegment.includes(":") ? lastSegment.slice(lastSegment.indexOf(":") + 1) : "latest";
  return tag === "latest" ? "Always" : "IfNotPresent";
}

function defaultContainer(c: KubeObject["spec"]): void {
  c.imagePullPolicy ??= imagePullPolicy(c.image);
  c.terminationMessagePath ??= "/dev/termination-log";
  c.terminationMessagePolicy ??= "File";
  c.resources ??= {};
  // requests default to limits when only limits are given
  if (c.resources.limits) {
    c.resources.requests ??= {};
    for (const [k, v] of Object.entries(c.resources.limits)) {
      if ((k === "cpu" || k === "memory") && c.resources.requests[k] === undefined) c.resources.requests[k] = v;
    }
  }
  for (const p of c.ports ?? []) p.protocol ??= "TCP";
}

function defaultPodSpec(spec: KubeObject["spec"]): void {
  spec.restartPolicy ??= "Always";
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= "ClusterFirst";
  spec.schedulerName ??= "default-scheduler";
  spec.securityContext ??= {};
  spec.serviceAccountName ??= "default";
  spec.serviceAccount ??= spec.serviceAccountName;
  spec.enableServiceLinks ??= true;
  spec.preemptionPolicy ??= "PreemptLowerPriority";
  spec.priority ??= 0;
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  for (const c of spec.containers ?? []) defaultContainer(c);
  for (const v of spec.volumes ?? []) {
    if (v.configMap) v.configMap.defaultMode ??= 420;
    if (v.secret) v.secret.defaultMode ??= 420;
  }
}

const DEFAULT_TOLERATION_SECONDS = 300;

/**
 * The DefaultTolerationSeconds admission plugin (create and update of pods): a pod that does not
 * already tolerate the not-ready and unreachable NoExecute taints (a toleration with no key or
 * no effect counts) tolerates each for 300 s, so a lost node evicts it after five minutes.
 */
export function defaultTolerations(spec: KubeObject["spec"]): void {
  const tolerations: { key?: string; effect?: string }[] = (spec.tolerations ??= []);
  for (const key of ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]) {
    const tolerated = tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === "NoExecute"));
    if (!tolerated) tolerations.push({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: DEFAULT_TOLERATION_SECONDS } as never);
  }
}

/**
 * A Secret's stringData is write-only: the apiserver merges it into data (base64, winning over
 * the same key there) on every create and update, and never stores it.
 */
export function mergeStringData(secret: KubeObject): void {
  if (secret.stringData === undefined) return;
  secret.data = { ...secret.data };
  for (const [key, value] of Object.entries(secret.stringData as Record<string, string>)) secret.data[key] = Buffer.from(String(value), "utf8").toString("base64");
  delete secret.stringData;
}

function qosClass(spec: KubeObject["spec"]): string {
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const r of ["cpu", "memory"]) {
      if (lim[r] === undefined || (req[r] !== undefined && String(req[r]) !== String(lim[r]))) guaranteed = false;
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

let nextClusterIp = 1;

/** Type-specific defaults for a new object; `status` is reset where the type owns it. */
export function applyCreateDefaults(obj: KubeObject): void {
  switch (obj.kind) {
    case "Pod":
      obj.spec ??= {};
      defaultPodSpec(obj.spec);
      defaultTolerations(obj.spec);
      obj.status = { phase: "Pending", qosClass: qosClass(obj.spec) };
      break;
    case "Service": {
      obj.spec ??= {};
      const s = obj.spec;
      s.type ??= "ClusterIP";
      s.sessionAffinity ??= "None";
      s.internalTrafficPolicy ??= "Cluster";
      s.ipFamilies ??= ["IPv4"];
      s.ipFamilyPolicy ??= "SingleStack";
      if (s.clusterIP === undefined || s.clusterIP === "") {
        const n = nextClusterIp++;
        s.clusterIP = `10.96.${(n >> 8) & 255}.${n & 255}`;
      }
      s.clusterIPs ??= s.clusterIP === "None" ? ["None"] : [s.clusterIP];
      for (const p of s.ports ?? []) {
        p.protocol ??= "TCP";
        p.targetPort ??= p.port;
      }
      obj.status = { loadBalancer: {} };
      break;
    }
    case "Namespace":
      obj.metadata.labels = { ...obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name };
      obj.spec = { finalizers: ["kubernetes"] };
      obj.status = { phase: "Active" };
      break;
    case "Job": {
      obj.spec ??= {};
      const s = obj.spec;
      s.parallelism ??= 1;
      s.completions ??= 1;
      s.backoffLimit ??= 6;
      s.completionMode ??= "NonIndexed";
      s.suspend ??= false;
      s.podReplacementPolicy ??= "TerminatingOrFailed";
      const uid = obj.metadata.uid!;
      const selectorLabels = { "batch.kubernetes.io/controller-uid": uid };
      s.selector ??= { matchLabels: selectorLabels };
      s.template ??= {};
      s.template.metadata ??= {};
      s.template.metadata.labels = {
        ...s.template.metadata.labels,
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": obj.metadata.name,
        "controller-uid": uid,
        "job-name": obj.metadata.name,
      };
      s.template.spec ??= {};
      defaultPodSpec(s.template.spec);
      obj.metadata.labels = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": obj.metadata.name,
        "controller-uid": uid,
        "job-name": obj.metadata.name,
        ...obj.metadata.labels,
      };
      obj.status = {};
      break;
    }
    case "Ingress":
      obj.status = { loadBalancer: {} };
      break;
    case "Event":
      obj.count ??= 1;
      break;
    case "Secret":
      obj.type ??= "Opaque";
      mergeStringData(obj);
      break;
    case "Gateway":
    case "HTTPRoute":
      delete obj.status;
      break;
  }
}
