/**
 * Schema validation for the simulated apiserver: every object is checked against the official
 * Kubernetes OpenAPI schemas (the validators `kubernetes-models` generates from them, and the
 * Gateway API CRD schemas from `@kubernetes-models/gateway-api`), and every schema error is
 * reported as a Kubernetes `StatusCause`, the shape a real apiserver puts in a 422 `Invalid`
 * Status.
 *
 * No field rule is written here: what the official schema requires (required properties, types,
 * enums, formats, patterns, bounds) is what is enforced. Rules a real apiserver adds in Go code
 * on top of the schema (for example "a Pod container needs an image", "metadata.name is
 * required", DNS-label checks on names) are not reproduced.
 */
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Endpoints } from "kubernetes-models/v1/Endpoints";
import { Event as CoreEvent } from "kubernetes-models/v1/Event";
import { LimitRange } from "kubernetes-models/v1/LimitRange";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { PersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import { Pod } from "kubernetes-models/v1/Pod";
import { ResourceQuota } from "kubernetes-models/v1/ResourceQuota";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Job } from "kubernetes-models/batch/v1/Job";
import { Lease } from "kubernetes-models/coordination.k8s.io/v1/Lease";
import { Event as EventsEvent } from "kubernetes-models/events.k8s.io/v1/Event";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { IngressClass } from "kubernetes-models/networking.k8s.io/v1/IngressClass";
import { RuntimeClass } from "kubernetes-models/node.k8s.io/v1/RuntimeClass";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { Gateway } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway";
import { GatewayClass } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass";
import { HTTPRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute";

/** One entry of `Status.details.causes` (metav1.StatusCause; `reason` is the cause type). */
export type SchemaCause = { field: string; reason: string; message: string };

/** A generated model: constructing it copies the data, `validate()` throws on schema errors. */
type ModelClass = new (data: never) => { validate(): void };

const MODELS: ReadonlyArray<readonly [apiVersion: string, kind: string, model: ModelClass]> = [
  ["v1", "Pod", Pod],
  ["v1", "Service", Service],
  ["v1", "ConfigMap", ConfigMap],
  ["v1", "Secret", Secret],
  ["v1", "Namespace", Namespace],
  ["v1", "Event", CoreEvent],
  ["v1", "ResourceQuota", ResourceQuota],
  ["v1", "LimitRange", LimitRange],
  ["v1", "ServiceAccount", ServiceAccount],
  ["v1", "Endpoints", Endpoints],
  ["v1", "PersistentVolumeClaim", PersistentVolumeClaim],
  ["apps/v1", "Deployment", Deployment],
  ["batch/v1", "Job", Job],
  ["coordination.k8s.io/v1", "Lease", Lease],
  ["events.k8s.io/v1", "Event", EventsEvent],
  ["networking.k8s.io/v1", "Ingress", Ingress],
  ["networking.k8s.io/v1", "IngressClass", IngressClass],
  ["networking.k8s.io/v1", "NetworkPolicy", NetworkPolicy],
  ["node.k8s.io/v1", "RuntimeClass", RuntimeClass],
  ["policy/v1", "PodDisruptionBudget", PodDisruptionBudget],
  ["rbac.authorization.k8s.io/v1", "Role", Role],
  ["rbac.authorization.k8s.io/v1", "RoleBinding", RoleBinding],
  ["rbac.authorization.k8s.io/v1", "ClusterRole", ClusterRole],
  ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding", ClusterRoleBinding],
  ["gateway.networking.k8s.io/v1", "Gateway", Gateway],
  ["gateway.networking.k8s.io/v1", "GatewayClass", GatewayClass],
  ["gateway.networking.k8s.io/v1", "HTTPRoute", HTTPRoute],
];

const MODEL_BY_TYPE = new Map<string, ModelClass>(
  MODELS.map(([apiVersion, kind, model]) => [`${apiVersion}/${kind}`, model]),
);

/** The `{apiVersion, kind}` pairs this module has an official schema for. */
export function knownKinds(): Array<{ apiVersion: string; kind: string }> {
  return MODELS.map(([apiVersion, kind]) => ({ apiVersion, kind }));
}

/** The error objects the generated (Ajv) validators attach to the thrown ValidationError. */
type SchemaError = {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
};

function schemaErrorsOf(thrown: unknown): SchemaError[] {
  if (thrown && typeof thrown === "object" && Array.isArray((thrown as { errors?: unknown }).errors)) {
    return (thrown as { errors: SchemaError[] }).errors;
  }
  throw thrown;
}

/**
 * Validates `obj` against the official schema of its apiVersion and kind. Returns the causes a
 * real apiserver would list (empty = valid). An unknown kind yields one cause on `kind`.
 */
export function validateAgainstSchema(obj: { apiVersion?: string; kind?: string }): SchemaCause[] {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    return [{ field: "", reason: "FieldValueTypeInvalid", message: `Invalid value: ${show(obj)}: must be an object` }];
  }
  const missing: SchemaCause[] = [];
  if (typeof obj.apiVersion !== "string" || obj.apiVersion === "") {
    missing.push({ field: "apiVersion", reason: "FieldValueRequired", message: "Required value" });
  }
  if (typeof obj.kind !== "string" || obj.kind === "") {
    missing.push({ field: "kind", reason: "FieldValueRequired", message: "Required value" });
  }
  if (missing.length > 0) return missing;

  const model = MODEL_BY_TYPE.get(`${obj.apiVersion}/${obj.kind}`);
  if (!model) {
    return [
      {
        field: "kind",
        reason: "FieldValueNotSupported",
        message: `Unsupported value: ${show(obj.kind)}: kind ${show(obj.kind)} of apiVersion ${show(obj.apiVersion)} is not known (no schema)`,
      },
    ];
  }
  try {
    new model(obj as never).validate();
    return [];
  } catch (thrown) {
    return causesFromSchemaErrors(obj, schemaErrorsOf(thrown));
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The apiserver decodes `format: byte` fields (Secret data, caBundles) with Go's base64 decoder,
 * which skips \r and \n: line-wrapped base64, as kustomize and many tools emit it, is valid.
 */
function isWrappedBase64(value: unknown): boolean {
  return typeof value === "string" && BASE64.test(value.replace(/[\r\n]/g, ""));
}

function causesFromSchemaErrors(root: unknown, allErrors: SchemaError[]): SchemaCause[] {
  const errors = allErrors.filter(
    (e) =>
      !(e.keyword === "format" && e.params.format === "byte" && isWrappedBase64(valueAt(root, pointerSegments(e.instancePath)))),
  );
  // A `oneOf`/`anyOf` failure (int-or-string, quantity) also reports each failed branch at the
  // same path; keep one cause for the whole alternative, built from its branches.
  const alternatives = new Map<string, SchemaError[]>();
  for (const e of errors) {
    if (e.keyword === "oneOf" || e.keyword === "anyOf") alternatives.set(e.instancePath, []);
  }
  for (const e of errors) {
    const branches = alternatives.get(e.instancePath);
    if (branches && e.keyword !== "oneOf" && e.keyword !== "anyOf") branches.push(e);
  }

  const causes: SchemaCause[] = [];
  const seen = new Set<string>();
  const add = (cause: SchemaCause) => {
    const key = `${cause.field}\u0000${cause.reason}\u0000${cause.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      causes.push(cause);
    }
  };

  for (const e of errors) {
    const segments = pointerSegments(e.instancePath);
    const branches = alternatives.get(e.instancePath);
    if (branches && e.keyword !== "oneOf" && e.keyword !== "anyOf") continue;
    const value = valueAt(root, segments);
    const field = fieldPath(segments);
    switch (e.keyword) {
      case "required": {
        const prop = String(e.params.missingProperty);
        add({ field: fieldPath([...segments, prop]), reason: "FieldValueRequired", message: "Required value" });
        break;
      }
      case "enum": {
        const allowed = (e.params.allowedValues as unknown[]).map(show).join(", ");
        add({ field, reason: "FieldValueNotSupported", message: `Unsupported value: ${show(value)}: supported values: ${allowed}` });
        break;
      }
      case "type":
        add({ field, reason: "FieldValueTypeInvalid", message: `Invalid value: ${show(value)}: must be of type ${String(e.params.type)}` });
        break;
      case "oneOf":
      case "anyOf":
        add({ field, reason: "FieldValueInvalid", message: `Invalid value: ${show(value)}: ${alternativeDetail(branches ?? [])}` });
        break;
      case "format":
        add({ field, reason: "FieldValueInvalid", message: `Invalid value: ${show(value)}: ${formatDetail(String(e.params.format))}` });
        break;
      case "pattern":
        add({ field, reason: "FieldValueInvalid", message: `Invalid value: ${show(value)}: should match '${String(e.params.pattern)}'` });
        break;
      case "maxLength":
        add({ field, reason: "FieldValueTooLong", message: `Too long: may not be more than ${String(e.params.limit)} bytes` });
        break;
      case "maxItems":
      case "maxProperties":
        add({
          field,
          reason: "FieldValueTooMany",
          message: `Too many: ${countOf(value)}: must have at most ${String(e.params.limit)} items`,
        });
        break;
      case "minLength":
        add({ field, reason: "FieldValueInvalid", message: `Invalid value: ${show(value)}: should be at least ${String(e.params.limit)} chars long` });
        break;
      case "minItems":
      case "minProperties":
        add({ field, reason: "FieldValueInvalid", message: `Invalid value: ${show(value)}: should have at least ${String(e.params.limit)} items` });
        break;
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum":
        add({
          field,
          reason: "FieldValueInvalid",
          message: `Invalid value: ${show(value)}: should be ${COMPARISON_WORDS[String(e.params.comparison)] ?? String(e.params.comparison)} ${String(e.params.limit)}`,
        });
        break;
      case "additionalProperties":
        add({
          field: fieldPath([...segments, String(e.params.additionalProperty)]),
          reason: "FieldValueInvalid",
          message: "Invalid value: unknown field",
        });
        break;
      default:
        add({ field, reason: "FieldValueInvalid", message: `Invalid value: ${show(value)}: ${e.message ?? e.keyword}` });
    }
  }
  return causes;
}

const COMPARISON_WORDS: Record<string, string> = {
  ">=": "greater than or equal to",
  "<=": "less than or equal to",
  ">": "greater than",
  "<": "less than",
};

function alternativeDetail(branches: SchemaError[]): string {
  const formats = branches.filter((b) => b.keyword === "format").map((b) => String(b.params.format));
  if (formats.length > 0) return formatDetail(formats[0]!);
  const types = branches.filter((b) => b.keyword === "type").map((b) => String(b.params.type));
  if (types.length > 0) return `must be of type ${[...new Set(types)].join(" or ")}`;
  return "does not match any allowed schema";
}

function formatDetail(format: string): string {
  if (format === "quantity") {
    return "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  }
  return `must be a valid ${format}`;
}

function countOf(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (value && typeof value === "object") return Object.keys(value).length;
  return 0;
}

/** JSON pointer (`/spec/containers/0/name`) → unescaped segments. */
function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function valueAt(root: unknown, segments: string[]): unknown {
  let current: unknown = root;
  for (const s of segments) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[s];
  }
  return current;
}

/**
 * Segments → the apiserver's field path notation: `spec.containers[0].image`, map keys that are
 * not plain identifiers in brackets (`metadata.labels[app.kubernetes.io/name]`).
 */
function fieldPath(segments: string[]): string {
  let out = "";
  for (const s of segments) {
    if (/^\d+$/.test(s) || !/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(s)) out += `[${s}]`;
    else out += out === "" ? s : `.${s}`;
  }
  return out;
}

/** Renders a bad value the way the apiserver's field errors do: strings quoted, others as JSON. */
function show(value: unknown): string {
  if (value === undefined) return "null";
  return JSON.stringify(value) ?? String(value);
}

function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion || !apiVersion.includes("/")) return "";
  return apiVersion.slice(0, apiVersion.lastIndexOf("/"));
}

/**
 * The message of a 422 `Invalid` Status, worded as the apiserver words it
 * (`apierrors.NewInvalid`): `<Kind>[.<group>] "<name>" is invalid: <field>: <message>`; with
 * more than one distinct cause the list is bracketed and comma-separated:
 * `Pod "x" is invalid: [spec.a: Required value, spec.b: Required value]`.
 */
export function formatInvalidMessage(
  obj: { apiVersion?: string; kind?: string; metadata?: { name?: string } | null },
  causes: SchemaCause[],
): string {
  const group = groupOf(obj.apiVersion);
  const qualifiedKind = group === "" ? String(obj.kind ?? "") : `${String(obj.kind ?? "")}.${group}`;
  const head = `${qualifiedKind} ${JSON.stringify(obj.metadata?.name ?? "")} is invalid`;
  const parts: string[] = [];
  for (const c of causes) {
    const text = c.field === "" ? c.message : `${c.field}: ${c.message}`;
    if (!parts.includes(text)) parts.push(text);
  }
  if (parts.length === 0) return head;
  if (parts.length === 1) return `${head}: ${parts[0]}`;
  return `${head}: [${parts.join(", ")}]`;
}

/** The full 422 Status body (metav1.Status) a real apiserver returns for these causes. */
export function invalidStatus(
  obj: { apiVersion?: string; kind?: string; metadata?: { name?: string } | null },
  causes: SchemaCause[],
): {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure";
  message: string;
  reason: "Invalid";
  details: { name: string; group?: string; kind: string; causes: SchemaCause[] };
  code: 422;
} {
  const group = groupOf(obj.apiVersion);
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: formatInvalidMessage(obj, causes),
    reason: "Invalid",
    details: {
      name: obj.metadata?.name ?? "",
      ...(group === "" ? {} : { group }),
      kind: String(obj.kind ?? ""),
      causes: causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })),
    },
    code: 422,
  };
}
