/**
 * A session's stream marks on its pod (docs/replicas.md "Output across a handover"): the
 * annotation `telo.run/streams` holds the ids its owner handed out (exactly, after a graceful
 * handover; else a ceiling) and, per app, where a successor's terminal starts in the log. One
 * write when a replica adopts the session, one at its handover, and one whenever its ids near
 * the saved ceiling; never one per output chunk. Each write is conditional on the pod's
 * resourceVersion and, among replicas, fenced as every pod write is; an owner's write is also
 * refused once another process has claimed the session's marks since its own claim, so a replica
 * that was paused cannot overwrite a successor's marks.
 */
import { randomUUID } from "node:crypto";
import type { V1Pod } from "@kubernetes/client-node";
import * as v from "valibot";
import { parseJsonAs } from "../../contract/parse-json.ts";
import type { SavedStreams, StreamIds } from "../../sessions/stream-marks.ts";
import { updatePod } from "../cluster/pod-calls.ts";
import type { KubeContext } from "../context.ts";
import type { ContainerTerminal, TerminalStart } from "./container-terminal.ts";
import { LogPositionSchema } from "./log-position.ts";
import { appContainerName } from "../specs/names.ts";

/** A run pod's one container. */
const RUN_CONTAINER = "session";

export const STREAMS_ANNOTATION = "telo.run/streams";

/** This process, as the writer of marks: a restarted replica under the same pod name is another writer. */
const WRITER = randomUUID();

const Id = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(2 ** 32 - 1));
const SavedStartSchema = v.union([v.object({ from: v.literal("beginning") }), v.object({ from: v.literal("position"), position: LogPositionSchema })]);

const StreamMarksSchema = v.object({
  by: v.pipe(v.string(), v.maxLength(64)),
  exact: v.boolean(),
  events: Id,
  apps: v.record(v.string(), v.object({ seq: Id, start: v.optional(SavedStartSchema) })),
});
type StreamMarks = v.InferOutput<typeof StreamMarksSchema>;

/** What an adopting replica reads from a pod: the saved ids, and where each app's terminal starts. */
export type AdoptedStreams = { saved: SavedStreams | undefined; startOf(app: string): TerminalStart };

export function adoptedStreams(pod: V1Pod): AdoptedStreams {
  const text = pod.metadata?.annotations?.[STREAMS_ANNOTATION];
  const marks = text === undefined ? undefined : parseJsonAs(StreamMarksSchema, text);
  const running = new Set((pod.status?.containerStatuses ?? []).filter((status) => status.state?.running).map((status) => status.name));
  const continues = new Set(marks?.exact ? Object.entries(marks.apps).flatMap(([name, app]) => (app.start ? [name] : [])) : []);
  return {
    saved: marks && { exact: marks.exact, ids: { events: marks.events, apps: Object.fromEntries(Object.entries(marks.apps).map(([name, app]) => [name, app.seq])) }, continues },
    startOf(app) {
      const saved = marks?.exact ? marks.apps[app]?.start : undefined;
      if (saved) return saved;
      // Not handed over: what an owner that died showed is not known, so nothing printed before
      // is shown again (the client is told of a gap); a container that had not run printed nothing.
      return running.has(RUN_CONTAINER) || running.has(appContainerName(app)) ? { from: "now" } : { from: "beginning" };
    },
  };
}

/**
 * An adopting owner's claim, its one write on the pod: the ceiling `ceilingAfter` gives for the
 * marks the pod carries as the write finds them and, among replicas, the stamp of this replica's
 * term with it (every fenced write stamps), so that no write of the predecessor lands after it.
 * `first`: the copy to write onto before any read (among replicas, a list just answered; one
 * replica, the watch's copy); a copy that has changed since costs a 409 and a read. Returns what
 * the last owner saved, from the pod the write replaced, and the pod as stored; neither when the
 * pod is gone.
 */
export async function claimStreams(ctx: KubeContext, name: string, first: V1Pod | undefined, ceilingAfter: (saved: SavedStreams | undefined) => StreamIds): Promise<{ stored?: V1Pod; streams?: AdoptedStreams }> {
  let streams: AdoptedStreams | undefined;
  const stored = await updatePod(ctx, name, "the adoption's claim on the pod", (pod) => {
    streams = adoptedStreams(pod);
    setMarks(pod, marksOf(ceilingAfter(streams.saved), false));
  }, first);
  return stored && streams ? { stored, streams } : {};
}

/** An owner's new ceiling; refused (an error) once another process has claimed the session. */
export function saveCeiling(ctx: KubeContext, podName: string, ceiling: StreamIds): Promise<void> {
  return writeMarks(ctx, podName, marksOf(ceiling, false));
}

/**
 * The owner's handover: each terminal closed and its successor's start found (by app), then the
 * last ids saved exactly with the starts that are known.
 */
export async function saveHandover(ctx: KubeContext, podName: string, ids: StreamIds, terminals: Iterable<[string, ContainerTerminal]>): Promise<void> {
  const starts = new Map(await Promise.all([...terminals].map(async ([app, terminal]) => [app, await terminal.handOverStart()] as const)));
  const marks = marksOf(ids, true);
  for (const [name, app] of Object.entries(marks.apps)) {
    const start = starts.get(name);
    if (start && start.from !== "now") app.start = start;
  }
  return writeMarks(ctx, podName, marks);
}

function marksOf(ids: StreamIds, exact: boolean): StreamMarks {
  return { by: WRITER, exact, events: ids.events, apps: Object.fromEntries(Object.entries(ids.apps).map(([name, seq]) => [name, { seq }])) };
}

/** Read, check, conditional replace (pod-calls.ts `updatePod`: fenced among replicas). */
async function writeMarks(ctx: KubeContext, podName: string, marks: StreamMarks): Promise<void> {
  await updatePod(ctx, podName, "the pod's stream marks", (pod) => {
    const text = pod.metadata?.annotations?.[STREAMS_ANNOTATION];
    const stored = text === undefined ? undefined : parseJsonAs(StreamMarksSchema, text);
    if (stored && stored.by !== WRITER) throw new Error("another replica has claimed the session's streams");
    setMarks(pod, marks);
  });
}

function setMarks(pod: V1Pod, marks: StreamMarks): void {
  pod.metadata = { ...pod.metadata, annotations: { ...pod.metadata?.annotations, [STREAMS_ANNOTATION]: JSON.stringify(marks) } };
}
