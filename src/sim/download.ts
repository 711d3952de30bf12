// The network side of busybox `wget` in a simulated container: a real GET of the URL (so a
// wrong or spent bundle URL fails the pod the way busybox fails it, and a single-use URL is
// used up), with busybox's words for each failure; and the pod network's one fault, an answer
// lost on its way back to the pod.
import * as v from "valibot";

/** The body, or what busybox prints to stderr for the failure (it then exits 1). */
export type Fetched = { body: Buffer } | { error: string };

/** One container's downloads: the GET as its pod's network carries it. */
export type Download = (url: string, signal: AbortSignal) => Promise<Fetched>;

const CLOSED_PREMATURELY = "wget: connection closed prematurely\n";

export async function fetchUrl(url: string, signal: AbortSignal): Promise<Fetched> {
  let res: Response;
  try {
    // busybox's own budget for a stalled transfer is about 30 s
    res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(30_000)]) });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === "TimeoutError") return { error: "wget: download timed out\n" };
    const host = new URL(url).hostname;
    if (e.cause?.code === "ENOTFOUND" || e.cause?.code === "EAI_AGAIN") return { error: `wget: bad address '${host}'\n` };
    return { error: `wget: can't connect to remote host (${host}): Connection refused\n` };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { error: `wget: server returned error: HTTP/1.1 ${res.status} ${res.statusText}\n` };
  }
  try {
    return { body: Buffer.from(await res.arrayBuffer()) };
  } catch {
    return { error: CLOSED_PREMATURELY };
  }
}

/** Matches downloads: omitted fields match any pod, any URL. */
export const LostDownloadRuleSchema = v.object({
  namespace: v.optional(v.string()),
  pod: v.optional(v.string()),
  /** A part of the URL, e.g. a route's path. */
  urlIncludes: v.optional(v.string()),
  count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 1),
});
export type LostDownloadRule = v.InferInput<typeof LostDownloadRuleSchema>;

/**
 * The pod network. A lost answer is one the server sent whole (whatever it did on the way, a
 * single-use token spent, happened) and the pod never got: its wget fails as on a cut connection.
 * Only 2xx answers are lost, so that a rule aimed at a route's real answer is not spent on a
 * refusal or a "not yet" first.
 */
export class PodNetwork {
  private losses: (v.InferOutput<typeof LostDownloadRuleSchema> & { remaining: number })[] = [];
  /** Answers lost so far, by every rule. */
  lost = 0;

  loseNext(rule: LostDownloadRule): void {
    const r = v.parse(LostDownloadRuleSchema, rule);
    this.losses.push({ ...r, remaining: r.count });
  }

  clear(): void {
    this.losses = [];
  }

  /** The downloads of a container of pod `namespace/pod`. */
  downloads(namespace: string, pod: string): Download {
    return async (url, signal) => {
      const fetched = await fetchUrl(url, signal);
      return "body" in fetched && this.takeLoss(namespace, pod, url) ? { error: CLOSED_PREMATURELY } : fetched;
    };
  }

  private takeLoss(namespace: string, pod: string, url: string): boolean {
    const i = this.losses.findIndex(
      (l) => (l.namespace === undefined || l.namespace === namespace) && (l.pod === undefined || l.pod === pod) && (l.urlIncludes === undefined || url.includes(l.urlIncludes)),
    );
    if (i < 0) return false;
    if (--this.losses[i]!.remaining === 0) this.losses.splice(i, 1);
    this.lost++;
    return true;
  }
}
