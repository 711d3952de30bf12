// OpenAPI documents for clients that read them: kubectl checks the v3 document of a group/version
// for a PATCH operation carrying `fieldValidation` and, finding it, leaves validation to the
// server (which runs the official schemas); `kubectl explain` reads the component schemas. Paths
// and GVK extensions come from the type table, field schemas from client-node's models.
import { createHash } from "node:crypto";
import { RESOURCE_TYPES, apiVersionOf, groupVersions, verbsFor, type ResourceType } from "./resources.ts";
import { SERVER_VERSION } from "./discovery.ts";
import { attributes, modelName } from "./models.ts";

const QUERY_PARAMS = ["dryRun", "fieldManager", "fieldValidation", "pretty"].map((name) => ({
  name,
  in: "query",
  schema: { type: "string", uniqueItems: true },
  description: name,
}));

function gvk(type: ResourceType) {
  return { group: type.group, version: type.version, kind: type.kind };
}

function schemaName(type: ResourceType): string {
  const group = type.group === "" ? "core" : type.group.split(".")[0]!;
  return `io.k8s.api.${group}.${type.version}.${type.kind}`;
}

function pathsFor(type: ResourceType, v3: boolean): Record<string, unknown> {
  const prefix = type.group === "" ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const collection = type.namespaced ? `${prefix}/namespaces/{namespace}/${type.plural}` : `${prefix}/${type.plural}`;
  const ref = v3 ? { $ref: `#/components/schemas/${schemaName(type)}` } : { $ref: `#/definitions/${schemaName(type)}` };
  const body = v3 ? { requestBody: { content: { "application/json": { schema: ref } } } } : { parameters: [{ name: "body", in: "body", required: true, schema: ref }] };
  const op = (action: string, verb: string, extra: object = {}) => ({
    operationId: `${verb}${type.kind}`,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk(type),
    parameters: QUERY_PARAMS.map((p) => (v3 ? p : { name: p.name, in: "query", type: "string", uniqueItems: true })),
    responses: { "200": v3 ? { description: "OK", content: { "application/json": { schema: ref } } } : { description: "OK", schema: ref } },
    ...extra,
  });
  const verbs = verbsFor(type);
  return {
    [collection]: {
      get: op("list", "list"),
      post: op("post", "create", body),
      ...(verbs.includes("deletecollection") ? { delete: op("deletecollection", "deleteCollection") } : {}),
    },
    [`${collection}/{name}`]: {
      get: op("get", "read"),
      put: op("put", "replace", body),
      patch: op("patch", "patch", body),
      delete: op("delete", "delete"),
    },
  };
}

/**
 * Component schemas for the given kinds and every type they reach, from client-node's models
 * (themselves generated from the official OpenAPI); kinds without a model get an open object.
 */
function schemasFor(types: readonly ResourceType[], refPrefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const pending: string[] = [];
  const ref = (model: string) => {
    if (!(model in out)) {
      out[model] = null;
      pending.push(model);
    }
    return { $ref: `${refPrefix}${model}` };
  };
  const schemaOf = (type: string, format: string): Record<string, unknown> => {
    const array = /^Array<(.+)>$/.exec(type);
    if (array) return { type: "array", items: schemaOf(array[1]!, "") };
    const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
    if (map) return { type: "object", additionalProperties: schemaOf(map[1]!, "") };
    switch (type) {
      case "string":
        return { type: "string" };
      case "boolean":
        return { type: "boolean" };
      case "number":
        return format === "int32" || format === "int64" ? { type: "integer", format } : { type: "number", format: format || "double" };
      case "Date":
        return { type: "string", format: "date-time" };
      case "IntOrString":
        return { "x-kubernetes-int-or-string": true };
      default:
        return attributes(type) ? ref(type) : { type: "object", "x-kubernetes-preserve-unknown-fields": true };
    }
  };
  const objectSchema = (model: string) => ({
    type: "object",
    properties: Object.fromEntries([...attributes(model)!.values()].map((a) => [a.baseName, schemaOf(a.type, a.format)])),
  });
  for (const t of types) {
    const model = modelName(apiVersionOf(t), t.kind);
    out[schemaName(t)] = {
      ...(model ? objectSchema(model) : { type: "object", "x-kubernetes-preserve-unknown-fields": true }),
      description: `${t.kind} (${apiVersionOf(t)})`,
      "x-kubernetes-group-version-kind": [gvk(t)],
    };
  }
  while (pending.length > 0) {
    const model = pending.pop()!;
    out[model] = objectSchema(model);
  }
  return out;
}

function gvPath(group: string, version: string): string {
  return group === "" ? `api/${version}` : `apis/${group}/${version}`;
}

function v3Document(group: string, version: string) {
  const types = RESOURCE_TYPES.filter((t) => t.group === group && t.version === version);
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: SERVER_VERSION.gitVersion },
    paths: Object.assign({}, ...types.map((t) => pathsFor(t, true))),
    components: { schemas: schemasFor(types, "#/components/schemas/") },
  };
}

const v3Docs = new Map(groupVersions().map(({ group, version }) => [gvPath(group, version), JSON.stringify(v3Document(group, version))]));
const v3Hashes = new Map([...v3Docs].map(([k, doc]) => [k, createHash("sha512").update(doc).digest("hex").slice(0, 128).toUpperCase()]));

export function openApiV3Root() {
  return { paths: Object.fromEntries([...v3Hashes].map(([k, hash]) => [k, { serverRelativeURL: `/openapi/v3/${k}?hash=${hash}` }])) };
}

export function openApiV3(path: string): string | undefined {
  return v3Docs.get(path.replace(/^\/openapi\/v3\//, ""));
}

export function openApiV2() {
  return {
    swagger: "2.0",
    info: { title: "Kubernetes", version: SERVER_VERSION.gitVersion },
    paths: Object.assign({}, ...RESOURCE_TYPES.map((t) => pathsFor(t, false))),
    definitions: schemasFor(RESOURCE_TYPES, "#/definitions/"),
  };
}
