// GET pods/<name>/log: the container's log with the kubelet's options (container, follow,
// tailLines, sinceSeconds, sinceTime, timestamps, limitBytes, previous) and its refusals.
import type { ServerResponse } from "node:http";
import type { Kubelet } from "./kubelet.ts";
import type { PodRuntime } from "./pod-runtime.ts";
import type { LogEntry } from "./logbuffer.ts";
import type { KubeObject } from "./object.ts";
import { badRequest, notFound } from "./status.ts";

/** Picks the container a log/attach request means, with the apiserver's 400s. */
export function pickContainer(pod: KubeObject, rt: PodRuntime | undefined, requested: string | null) {
  const all: string[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c: { name: string }) => c.name);
  const mains: string[] = (pod.spec?.containers ?? []).map((c: { name: string }) => c.name);
  let name = requested ?? "";
  if (name === "") {
    const preferred = pod.metadata.annotations?.["kubectl.kubernetes.io/default-container"];
    if (preferred && mains.includes(preferred)) name = preferred;
    else if (mains.length === 1) name = mains[0]!;
    else throw badRequest(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [${mains.join(" ")}]${(pod.spec?.initContainers ?? []).length ? ` or one of the init containers: [${(pod.spec.initContainers as { name: string }[]).map((c) => c.name).join(" ")}]` : ""}`);
  }
  if (!all.includes(name)) throw badRequest(`container ${name} is not valid for pod ${pod.metadata.name}`);
  const record = rt?.container(name);
  return { name, record };
}

function waitingMessage(pod: KubeObject, name: string): string {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const reason = statuses.find((s: { name: string }) => s.name === name)?.state?.waiting?.reason ?? "ContainerCreating";
  return `container "${name}" in pod "${pod.metadata.name}" is waiting to start: ${reason}`;
}

/**
 * The kubelet stores output line by line; a chunk without a trailing newline is a partial line.
 * With timestamps, each line is prefixed once, with the time of its first chunk: the rest of a
 * partial line, written later, continues it without a prefix (the kubelet's log reader does the
 * same). `state` carries whether the next chunk starts a line across calls (a follow).
 */
function formatEntries(entries: LogEntry[], timestamps: boolean, state = { atLineStart: true }): string[] {
  const lines: string[] = [];
  for (const e of entries) {
    const text = e.data.toString("utf8");
    const parts = text.split(/(?<=\n)/);
    for (const p of parts) {
      lines.push(timestamps && state.atLineStart ? `${e.time.toISOString().replace("Z", "000000Z")} ${p}` : p);
      state.atLineStart = p.endsWith("\n");
    }
  }
  return lines;
}

export function serveLogs(kubelet: Kubelet, pod: KubeObject, query: URLSearchParams, res: ServerResponse): void {
  const rt = kubelet.runtime(pod.metadata.namespace!, pod.metadata.name);
  const { name, record } = pickContainer(pod, rt, query.get("container"));
  const previous = query.get("previous") === "true";
  if (previous && !record?.previous) {
    throw badRequest(`previous terminated container "${name}" in pod "${pod.metadata.name}" not found`);
  }
  const proc = previous ? record?.previous : record?.process;
  if (!proc) throw badRequest(waitingMessage(pod, name));
  if (!rt) throw notFound({ group: "", plural: "pods" }, pod.metadata.name);

  const timestamps = query.get("timestamps") === "true";
  const sinceSeconds = Number(query.get("sinceSeconds") ?? 0);
  const sinceTime = query.get("sinceTime");
  const since = sinceTime ? Date.parse(sinceTime) : sinceSeconds > 0 ? Date.now() - sinceSeconds * 1000 : 0;
  const tail = query.get("tailLines");
  let budget = query.get("limitBytes") ? Number(query.get("limitBytes")) : Infinity;

  const lineState = { atLineStart: true };
  let lines = formatEntries(proc.logs.snapshot().filter((e) => e.time.getTime() >= since), timestamps, lineState);
  if (tail !== null) lines = Number(tail) > 0 ? lines.slice(-Number(tail)) : [];

  res.writeHead(200, { "content-type": "text/plain", "cache-control": "no-cache, private" });
  const write = (text: string): boolean => {
    if (budget <= 0) return false;
    const buf = Buffer.from(text);
    const chunk = buf.length > budget ? buf.subarray(0, budget) : buf;
    budget -= chunk.length;
    res.write(chunk);
    return budget > 0;
  };
  for (const l of lines) if (!write(l)) break;
  if (query.get("follow") !== "true" || budget <= 0) {
    res.end();
    return;
  }
  const stop = proc.logs.follow((e) => {
    if (e === null || !formatEntries([e], timestamps, lineState).every(write)) {
      stop();
      res.end();
    }
  });
  res.on("close", stop);
}
