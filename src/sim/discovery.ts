// Legacy (non-aggregated) discovery: /api, /apis, /api/v1, /apis/<g>[/<v>] and /version. kubectl
// asks for aggregated discovery first and falls back to these when the answer is plain JSON.
import { RESOURCE_TYPES, groupVersions, verbsFor, type ResourceType } from "./resources.ts";

export const SERVER_VERSION = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.0-sim",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2024-12-11T00:00:00Z",
  goVersion: "go1.23.3",
  compiler: "gc",
  platform: "linux/amd64",
};

const SUBRESOURCE_VERBS: Record<string, { kind: string; verbs: string[] }> = {
  status: { kind: "", verbs: ["get", "patch", "update"] },
  log: { kind: "Pod", verbs: ["get"] },
  attach: { kind: "PodAttachOptions", verbs: ["create", "get"] },
  exec: { kind: "PodExecOptions", verbs: ["create", "get"] },
  finalize: { kind: "Namespace", verbs: ["update"] },
};

function resourceEntries(type: ResourceType) {
  const main: Record<string, unknown> = {
    name: type.plural,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: verbsFor(type),
  };
  if (type.shortNames.length > 0) main.shortNames = type.shortNames;
  if (type.categories) main.categories = type.categories;
  const subs = type.subresources.map((s) => ({
    name: `${type.plural}/${s}`,
    singularName: "",
    namespaced: type.namespaced,
    kind: SUBRESOURCE_VERBS[s]!.kind || type.kind,
    verbs: SUBRESOURCE_VERBS[s]!.verbs,
  }));
  return [main, ...subs];
}

export function discoveryDocument(path: string, serverAddress: string): unknown | undefined {
  const parts = path.split("/").filter(Boolean);
  if (path === "/version") return SERVER_VERSION;
  if (path === "/api") {
    return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }] };
  }
  if (path === "/api/v1") {
    return { kind: "APIResourceList", groupVersion: "v1", resources: RESOURCE_TYPES.filter((t) => t.group === "").flatMap(resourceEntries) };
  }
  const groups = groupVersions().filter((gv) => gv.group !== "");
  const groupDoc = (group: string) => {
    const versions = groups.filter((g) => g.group === group).map((g) => ({ groupVersion: `${g.group}/${g.version}`, version: g.version }));
    return { name: group, versions, preferredVersion: versions[0] };
  };
  if (path === "/apis") {
    const names = [...new Set(groups.map((g) => g.group))];
    return { kind: "APIGroupList", apiVersion: "v1", groups: names.map(groupDoc) };
  }
  if (parts[0] === "apis" && parts.length === 2 && groups.some((g) => g.group === parts[1])) {
    return { kind: "APIGroup", apiVersion: "v1", ...groupDoc(parts[1]!) };
  }
  if (parts[0] === "apis" && parts.length === 3 && groups.some((g) => g.group === parts[1] && g.version === parts[2])) {
    return {
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: `${parts[1]}/${parts[2]}`,
      resources: RESOURCE_TYPES.filter((t) => t.group === parts[1] && t.version === parts[2]).flatMap(resourceEntries),
    };
  }
  return undefined;
}
