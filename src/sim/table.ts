// `kubectl get` asks for server-side printing (meta.k8s.io Table). These are the columns the
// apiserver's printers use for the kinds the runner creates; other kinds get Name and Age.
import type { KubeObject } from "./object.ts";
import type { ResourceType } from "./resources.ts";

interface Column {
  name: string;
  type: string;
  format?: string;
  priority?: number;
  cell: (o: KubeObject) => string | number;
}

export function wantsTable(accept: string | undefined): boolean {
  return !!accept && accept.includes("as=Table");
}

function age(o: KubeObject): string {
  return since(o.metadata.creationTimestamp);
}

function since(time: string | undefined): string {
  const created = Date.parse(time ?? "");
  if (Number.isNaN(created)) return "<unknown>";
  const s = Math.max(0, Math.floor((Date.now() - created) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 3600 * 3) return `${Math.floor(s / 60)}m`;
  if (s < 86400 * 2) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function podStatus(o: KubeObject): string {
  if (o.metadata.deletionTimestamp) return "Terminating";
  const st = o.status ?? {};
  if (st.reason) return st.reason;
  for (const c of st.initContainerStatuses ?? []) {
    if (c.state?.terminated && c.state.terminated.exitCode !== 0) return `Init:${c.state.terminated.reason ?? "Error"}`;
    if (c.state?.waiting && c.state.waiting.reason !== "PodInitializing") return `Init:${c.state.waiting.reason}`;
    if (!c.state?.terminated) return `Init:0/${(st.initContainerStatuses ?? []).length}`;
  }
  for (const c of st.containerStatuses ?? []) {
    if (c.state?.waiting?.reason) return c.state.waiting.reason;
    if (c.state?.terminated?.reason) return c.state.terminated.reason;
  }
  return st.phase ?? "Pending";
}

const NAME: Column = { name: "Name", type: "string", format: "name", cell: (o) => o.metadata.name };
const AGE: Column = { name: "Age", type: "string", cell: age };

const COLUMNS: Record<string, Column[]> = {
  Pod: [
    NAME,
    {
      name: "Ready",
      type: "string",
      cell: (o) => `${(o.status?.containerStatuses ?? []).filter((c: { ready?: boolean }) => c.ready).length}/${(o.spec?.containers ?? []).length}`,
    },
    { name: "Status", type: "string", cell: podStatus },
    { name: "Restarts", type: "string", cell: (o) => String((o.status?.containerStatuses ?? []).reduce((n: number, c: { restartCount?: number }) => n + (c.restartCount ?? 0), 0)) },
    AGE,
    { name: "IP", type: "string", priority: 1, cell: (o) => o.status?.podIP ?? "<none>" },
    { name: "Node", type: "string", priority: 1, cell: (o) => o.spec?.nodeName ?? "<none>" },
  ],
  Service: [
    NAME,
    { name: "Type", type: "string", cell: (o) => o.spec?.type ?? "ClusterIP" },
    { name: "Cluster-IP", type: "string", cell: (o) => o.spec?.clusterIP ?? "<none>" },
    { name: "External-IP", type: "string", cell: () => "<none>" },
    { name: "Port(s)", type: "string", cell: (o) => (o.spec?.ports ?? []).map((p: { port: number; protocol?: string }) => `${p.port}/${p.protocol ?? "TCP"}`).join(",") || "<none>" },
    AGE,
  ],
  Job: [
    NAME,
    { name: "Status", type: "string", cell: (o) => ((o.status?.conditions ?? []) as { type: string; status: string }[]).find((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True")?.type ?? "Running" },
    { name: "Completions", type: "string", cell: (o) => `${o.status?.succeeded ?? 0}/${o.spec?.completions ?? 1}` },
    AGE,
  ],
  Node: [
    NAME,
    { name: "Status", type: "string", cell: (o) => (((o.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === "Ready" && c.status === "True") ? "Ready" : "NotReady") },
    { name: "Roles", type: "string", cell: () => "<none>" },
    AGE,
    { name: "Version", type: "string", cell: (o) => o.status?.nodeInfo?.kubeletVersion ?? "" },
  ],
  Event: [
    { name: "Last Seen", type: "string", cell: (o) => since(o.lastTimestamp ?? o.metadata.creationTimestamp) },
    { name: "Type", type: "string", cell: (o) => o.type ?? "" },
    { name: "Reason", type: "string", cell: (o) => o.reason ?? "" },
    { name: "Object", type: "string", cell: (o) => `${String(o.involvedObject?.kind ?? "").toLowerCase()}/${o.involvedObject?.name ?? ""}` },
    { name: "Message", type: "string", cell: (o) => o.message ?? "" },
  ],
  Namespace: [NAME, { name: "Status", type: "string", cell: (o) => o.status?.phase ?? "Active" }, AGE],
  RuntimeClass: [NAME, { name: "Handler", type: "string", cell: (o) => o.handler ?? "" }, AGE],
  Lease: [NAME, { name: "Holder", type: "string", cell: (o) => o.spec?.holderIdentity ?? "" }, AGE],
  ConfigMap: [NAME, { name: "Data", type: "integer", cell: (o) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length }, AGE],
};

export function renderTable(type: ResourceType, items: KubeObject[], resourceVersion: string) {
  const columns = COLUMNS[type.kind] ?? [NAME, AGE];
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: { resourceVersion } as Record<string, unknown>,
    columnDefinitions: columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? "", description: c.name, priority: c.priority ?? 0 })),
    rows: items.map((o) => ({
      cells: columns.map((c) => c.cell(o)),
      object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata },
    })),
  };
}
