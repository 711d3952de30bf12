/**
 * Fencing on the session pod (docs/replicas.md). A Lease alone does not stop a holder that was
 * paused past its expiry from writing; the pod does. Every write a replica makes to a session
 * pod is conditional on the pod's resourceVersion and stamps the writer's term (the shard
 * Lease's leaseTransitions under which it holds the shard); a writer refuses to act on a pod
 * stamped with a newer term. A successor stamps each pod of the shard before it acts on it, so
 * once that stamp is stored every write of the predecessor fails: either on the resourceVersion
 * (409) or, after it re-reads the pod, on the term.
 */
import * as v from "valibot";
import type { Writer } from "../../sessions/ownership-seam.ts";

/** The term under which the pod was last written, and by whom. */
export const TERM_ANNOTATION = "telo.run/owner-term";
export const TERM_HOLDER_ANNOTATION = "telo.run/owner-holder";

export type { Writer } from "../../sessions/ownership-seam.ts";

/** The part of a pod the fence reads. */
export const FencedPodSchema = v.object({
  metadata: v.object({
    name: v.string(),
    resourceVersion: v.string(),
    annotations: v.optional(v.nullable(v.record(v.string(), v.string()))),
  }),
});
export type FencedPod = v.InferOutput<typeof FencedPodSchema>;

/** The term stamped on a pod; undefined for a pod never written under a term (created before fencing). */
export function stampedTerm(pod: FencedPod): Writer | undefined {
  const annotations = pod.metadata.annotations ?? {};
  const raw = annotations[TERM_ANNOTATION];
  if (raw === undefined || !/^(0|[1-9]\d{0,14})$/.test(raw)) return undefined;
  return { term: Number(raw), holder: annotations[TERM_HOLDER_ANNOTATION] ?? "" };
}

export type FenceVerdict = { act: true } | { act: false; reason: "newer-term" | "same-term-other-holder"; stamped: Writer };

/**
 * Whether `writer` may act on `pod`: not when the pod carries a newer term (a successor owns
 * it), nor when it carries the same term under another holder (two holders of one term means
 * the shard Lease was deleted and recreated; neither should guess).
 */
export function mayAct(pod: FencedPod, writer: Writer): FenceVerdict {
  // The only replica there is: whatever an earlier install of several stamped is gone.
  if (writer.alone) return { act: true };
  const stamped = stampedTerm(pod);
  if (!stamped || stamped.term < writer.term) return { act: true };
  if (stamped.term > writer.term) return { act: false, reason: "newer-term", stamped };
  if (stamped.holder !== "" && stamped.holder !== writer.holder) return { act: false, reason: "same-term-other-holder", stamped };
  return { act: true };
}

/** The annotations that stamp `writer` on a pod (none for the only replica there is). */
export function termAnnotations(writer: Writer): Record<string, string> {
  return writer.alone ? {} : { [TERM_ANNOTATION]: String(writer.term), [TERM_HOLDER_ANNOTATION]: writer.holder };
}

/**
 * The body of a fenced full update (PUT): the pod as read, with its resourceVersion kept as the
 * precondition and `writer` stamped. `change` edits a copy, never the object passed in.
 */
export function fencedUpdate<P extends FencedPod>(pod: P, writer: Writer, change: (copy: P) => void = () => undefined): P {
  const copy = structuredClone(pod);
  change(copy);
  copy.metadata.resourceVersion = pod.metadata.resourceVersion;
  copy.metadata.annotations = { ...(copy.metadata.annotations ?? {}), ...termAnnotations(writer) };
  return copy;
}

/**
 * The DeleteOptions of a fenced delete, at once (grace 0): a delete cannot stamp a term, so it is
 * refused (409) unless the pod is still the version whose term the writer checked. The grace is
 * in the body with the preconditions: an apiserver that gets a body reads every delete option
 * from it and ignores the query's, so a `?gracePeriodSeconds=0` beside this body would leave the
 * pod its default 30 s.
 */
export function fencedDeleteOptions(pod: FencedPod): { gracePeriodSeconds: 0; preconditions: { resourceVersion: string } } {
  return { gracePeriodSeconds: 0, preconditions: { resourceVersion: pod.metadata.resourceVersion } };
}

/**
 * The writer of a pod of no session (an unclaimed warm-pool pod, one no record explains): it
 * holds no shard, so it writes only pods no replica has stamped. A stamp means a session's owner
 * has the pod now (a claim stamps it), and any stamped term is newer than this one.
 */
export const UNSHARDED: Writer = { holder: "", term: -1 };

export type FencedWriteResult =
  | { written: true }
  /** The pod is gone (the read found none): nothing to write. */
  | { written: false; gone: true }
  /** This replica holds no term for the pod's session now. */
  | { written: false; notHeld: true }
  | { written: false; verdict: Exclude<FenceVerdict, { act: true }> }
  | { written: false; conflicts: number };

/**
 * A fenced write with its retries: read the pod, check the term, write conditionally on the
 * version read. A 409 does not by itself mean a successor wrote (the kubelet's status updates
 * move the resourceVersion too), so the pod is read again and the term checked again, up to
 * `attempts` times. Refused when the pod carries a newer term; `isConflict` tells a lost race
 * from a failure, which is thrown. `writer` may depend on the pod read (its session's shard);
 * undefined means this replica may not write to it at all.
 */
export async function writeFenced<P extends FencedPod>(
  writer: Writer | ((pod: P) => Writer | undefined),
  read: () => Promise<P | undefined>,
  write: (pod: P, writer: Writer) => Promise<unknown>,
  isConflict: (err: unknown) => boolean,
  attempts = 5,
): Promise<FencedWriteResult> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const pod = await read();
    if (pod === undefined) return { written: false, gone: true };
    const current = typeof writer === "function" ? writer(pod) : writer;
    if (current === undefined) return { written: false, notHeld: true };
    const verdict = mayAct(pod, current);
    if (!verdict.act) return { written: false, verdict };
    try {
      await write(pod, current);
      return { written: true };
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  return { written: false, conflicts: attempts };
}
