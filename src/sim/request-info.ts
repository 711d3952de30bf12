// Turns an apiserver URL and method into what RBAC would see: verb, API group, resource,
// subresource, namespace and name (the same decomposition kube-apiserver's RequestInfo makes).
import { lookupType, type ResourceType } from "./resources.ts";
import { pathNotFound } from "./status.ts";

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection";

export interface RequestInfo {
  verb: Verb;
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  query: URLSearchParams;
}

/**
 * The verbs RBAC checks for a request: its own, and for pods/attach and pods/exec also `create`,
 * which kube-apiserver 1.36 demands of a WebSocket upgrade (a GET) before it connects the stream
 * (feature AuthorizePodWebsocketUpgradeCreatePermission, on by default): `get` alone is 403.
 */
export function authorizedVerbs(info: RequestInfo): Verb[] {
  const streaming = info.type.plural === "pods" && (info.subresource === "attach" || info.subresource === "exec");
  return streaming && info.verb === "get" ? ["get", "create"] : [info.verb];
}

export function parseRequestInfo(method: string, url: URL): RequestInfo | undefined {
  const parts = url.pathname.split("/").filter((p) => p !== "").map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 2) {
    group = "";
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 3) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else return undefined;
  if (rest.length === 0) return undefined;

  let legacyWatch = false;
  if (rest[0] === "watch") {
    legacyWatch = true;
    rest = rest.slice(1);
  }

  let namespace: string | undefined;
  let plural: string;
  let name: string | undefined;
  let subresource: string | undefined;
  const namespaceObject = rest[0] === "namespaces" && (rest.length === 2 || (rest.length === 3 && (rest[2] === "status" || rest[2] === "finalize")));
  if (namespaceObject) {
    // A namespace itself: /api/v1/namespaces/<name>[/status|/finalize]
    plural = "namespaces";
    name = rest[1];
    subresource = rest[2];
  } else if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    [plural, name, subresource] = rest.slice(2) as [string, string?, string?];
    if (rest.length > 5) throw pathNotFound();
  } else {
    [plural, name, subresource] = rest as [string, string?, string?];
    if (rest.length > 3) throw pathNotFound();
  }

  const type = lookupType(group, version, plural);
  if (!type) throw pathNotFound();
  if (!type.namespaced && namespace !== undefined) throw pathNotFound();
  if (subresource !== undefined && !type.subresources.includes(subresource)) throw pathNotFound();

  const query = url.searchParams;
  const watchParam = query.get("watch");
  const watching = legacyWatch || watchParam === "true" || watchParam === "1";
  let verb: Verb;
  switch (method) {
    case "GET":
    case "HEAD":
      verb = name === undefined ? (watching ? "watch" : "list") : watching ? "watch" : "get";
      break;
    case "POST":
      verb = "create";
      break;
    case "PUT":
      verb = "update";
      break;
    case "PATCH":
      verb = "patch";
      break;
    case "DELETE":
      verb = name === undefined ? "deletecollection" : "delete";
      break;
    default:
      return undefined;
  }
  const info: RequestInfo = { verb, type, query };
  if (namespace !== undefined) info.namespace = namespace;
  if (name !== undefined) info.name = name;
  if (subresource !== undefined) info.subresource = subresource;
  return info;
}
