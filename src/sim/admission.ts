// What the apiserver checks before it stores an object: the RuntimeClass of a pod (403, a
// mutating plugin, so first), name rules and the official schema (422 Invalid), Pod Security
// for pods (403), then ResourceQuota (403), in that order.
import { validateAgainstSchema, formatInvalidMessage, type SchemaCause } from "./admission/schema.ts";
import { podSecurityViolations, podSecurityForbiddenMessage, enforcedLevel } from "./admission/pod-security.ts";
import type { KubeObject } from "./object.ts";
import type { ResourceType } from "./resources.ts";
import { StatusError, type StatusDetails } from "./status.ts";
import type { Store } from "./store.ts";
import { checkQuota } from "./quota.ts";
import { admitRuntimeClass } from "./admission/runtime-class.ts";
import { leaseSpecCauses } from "./lease.ts";

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const SUBDOMAIN_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
const LABEL_MSG = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;
const DNS1035_MSG = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`;

export function invalidError(obj: KubeObject, causes: SchemaCause[]): StatusError {
  const group = obj.apiVersion?.includes("/") ? obj.apiVersion.slice(0, obj.apiVersion.indexOf("/")) : "";
  const details: StatusDetails = { name: obj.metadata?.name ?? "", kind: obj.kind ?? "", causes };
  if (group) details.group = group;
  return new StatusError(422, "Invalid", formatInvalidMessage(obj, causes), details);
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MSG = `a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`;

/** ConfigMap and Secret keys become file names in a volume: the apiserver's IsConfigMapKey. */
function dataKeyCauses(field: string, data: Record<string, unknown> | undefined): SchemaCause[] {
  const causes: SchemaCause[] = [];
  for (const key of Object.keys(data ?? {})) {
    const path = `${field}[${key}]`;
    if (key.length > 253) causes.push(invalidValue(path, key, "must be no more than 253 characters"));
    if (!CONFIG_KEY.test(key)) causes.push(invalidValue(path, key, CONFIG_KEY_MSG));
    if (key === ".") causes.push(invalidValue(path, key, "must not be '.'"));
    else if (key === "..") causes.push(invalidValue(path, key, "must not be '..'"));
    else if (key.startsWith("..")) causes.push(invalidValue(path, key, "must not start with '..'"));
  }
  return causes;
}

/** apimachinery's IsDNS1123Label: a length error and a format error are reported apart. */
function dns1123LabelErrors(value: string): string[] {
  const errors = value.length > 63 ? ["must be no more than 63 characters"] : [];
  if (!DNS1123_LABEL.test(value)) errors.push(DNS1123_SUBDOMAIN.test(value) ? "must not contain dots" : LABEL_MSG);
  return errors;
}

function invalidValue(field: string, value: unknown, why: string): SchemaCause {
  return { field, reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${why}` };
}

function nameCauses(type: ResourceType, name: string): SchemaCause[] {
  if (type.kind === "Namespace") {
    if (name.length > 63 || !DNS1123_LABEL.test(name)) return [invalidValue("metadata.name", name, LABEL_MSG)];
  } else if (type.kind === "Service") {
    if (name.length > 63 || !DNS1035_LABEL.test(name)) return [invalidValue("metadata.name", name, DNS1035_MSG)];
  } else if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    return [invalidValue("metadata.name", name, SUBDOMAIN_MSG)];
  }
  return [];
}

/** Checks the pod spec rules that the OpenAPI schema cannot express. */
function podSpecCauses(spec: KubeObject["spec"], prefix: string): SchemaCause[] {
  const causes: SchemaCause[] = [];
  if (!Array.isArray(spec?.containers) || spec.containers.length === 0) {
    causes.push({ field: `${prefix}.containers`, reason: "FieldValueRequired", message: "Required value" });
    return causes;
  }
  // As ValidatePodSpec: containers first, then init containers, whose names must differ from
  // every container's too (a clash is reported on the init container).
  const names = new Set<string>();
  for (const list of ["containers", "initContainers"] as const) {
    (spec[list] ?? []).forEach((c: KubeObject["spec"], i: number) => {
      const path = `${prefix}.${list}[${i}]`;
      if (typeof c.name !== "string" || c.name === "") causes.push({ field: `${path}.name`, reason: "FieldValueRequired", message: "Required value" });
      else causes.push(...dns1123LabelErrors(c.name).map((why) => invalidValue(`${path}.name`, c.name, why)));
      if (names.has(c.name)) causes.push({ field: `${path}.name`, reason: "FieldValueDuplicate", message: `Duplicate value: ${JSON.stringify(c.name)}` });
      else if (c.name) names.add(c.name);
      if (typeof c.image !== "string" || c.image.trim() === "") causes.push({ field: `${path}.image`, reason: "FieldValueRequired", message: "Required value" });
      (c.ports ?? []).forEach((p: { containerPort?: number }, j: number) => {
        const port = p.containerPort;
        if (typeof port === "number" && (port < 1 || port > 65535)) {
          causes.push(invalidValue(`${path}.ports[${j}].containerPort`, port, "must be between 1 and 65535, inclusive"));
        }
      });
    });
  }
  if (spec.restartPolicy !== undefined && !["Always", "OnFailure", "Never"].includes(spec.restartPolicy)) {
    causes.push({ field: `${prefix}.restartPolicy`, reason: "FieldValueNotSupported", message: `Unsupported value: ${JSON.stringify(spec.restartPolicy)}: supported values: "Always", "OnFailure", "Never"` });
  }
  if (spec.activeDeadlineSeconds !== undefined && !(spec.activeDeadlineSeconds > 0)) {
    causes.push(invalidValue(`${prefix}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, "must be between 1 and 2147483647, inclusive"));
  }
  return causes;
}

function semanticCauses(obj: KubeObject): SchemaCause[] {
  switch (obj.kind) {
    case "Pod":
      return podSpecCauses(obj.spec, "spec");
    case "Job": {
      const causes = podSpecCauses(obj.spec?.template?.spec, "spec.template.spec");
      const rp = obj.spec?.template?.spec?.restartPolicy;
      if (rp !== undefined && rp !== "Never" && rp !== "OnFailure") {
        causes.push({ field: "spec.template.spec.restartPolicy", reason: "FieldValueNotSupported", message: `Unsupported value: ${JSON.stringify(rp)}: supported values: "OnFailure", "Never"` });
      }
      return causes;
    }
    case "ConfigMap":
    case "Secret": {
      // A Secret's stringData was merged into data by now (defaults.ts), as the apiserver merges it.
      const causes = [...dataKeyCauses("data", obj.data), ...dataKeyCauses("binaryData", obj.binaryData)];
      const size = JSON.stringify(obj.data ?? {}).length + JSON.stringify(obj.binaryData ?? {}).length;
      if (size > 1024 * 1024) causes.push({ field: "", reason: "FieldValueTooLong", message: `Too long: must have at most 1048576 bytes` });
      return causes;
    }
    case "Service": {
      // Only a headless or ExternalName Service may have no ports.
      const s = obj.spec ?? {};
      const portless = !Array.isArray(s.ports) || s.ports.length === 0;
      return portless && s.clusterIP !== "None" && s.type !== "ExternalName" ? [{ field: "spec.ports", reason: "FieldValueRequired", message: "Required value" }] : [];
    }
    case "Lease":
      return leaseSpecCauses(obj);
    default:
      return [];
  }
}

/** 422 when the object breaks naming rules, the official schema, or a rule the schema cannot carry. */
export function validateObject(type: ResourceType, obj: KubeObject): void {
  const causes = [...nameCauses(type, obj.metadata.name), ...validateAgainstSchema(obj), ...semanticCauses(obj)];
  if (causes.length > 0) throw invalidError(obj, causes);
}

/**
 * Pod Security admission as the namespace labels ask: `enforce` refuses with 403; `warn` (checked
 * against pods and the pod templates of Jobs) returns warnings for the `Warning` header.
 */
function admitPodSecurity(store: Store, namespaceType: ResourceType, obj: KubeObject): string[] {
  const ns = store.get(namespaceType, undefined, obj.metadata.namespace!);
  const labels = ns?.metadata.labels ?? {};
  const pod = obj.kind === "Pod" ? obj : { metadata: obj.spec?.template?.metadata ?? {}, spec: obj.spec?.template?.spec };
  if (obj.kind === "Pod") {
    const level = enforcedLevel(labels);
    const violations = level === "privileged" ? [] : podSecurityViolations(level, pod);
    if (violations.length > 0) {
      throw new StatusError(403, "Forbidden", podSecurityForbiddenMessage(obj.metadata.name, level, violations), { name: obj.metadata.name, kind: "pods" });
    }
  }
  const warnLabel = labels["pod-security.kubernetes.io/warn"];
  if (warnLabel === undefined) return [];
  const warnLevel = enforcedLevel({ "pod-security.kubernetes.io/enforce": warnLabel });
  const warned = warnLevel === "privileged" ? [] : podSecurityViolations(warnLevel, pod);
  return warned.length > 0 ? [`would violate PodSecurity "${warnLevel}:latest": ${warned.join(", ")}`] : [];
}

/** Everything a create goes through after defaulting: RuntimeClass, schema, Pod Security, quota. Returns warnings. */
export function admitNew(store: Store, type: ResourceType, namespaceType: ResourceType, obj: KubeObject): string[] {
  if (type.kind === "Pod") admitRuntimeClass(store, obj);
  validateObject(type, obj);
  const warnings = type.kind === "Pod" || type.kind === "Job" ? admitPodSecurity(store, namespaceType, obj) : [];
  checkQuota(store, type, obj);
  return warnings;
}
