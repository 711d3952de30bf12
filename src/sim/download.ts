// The network side of busybox `wget` in a simulated container: a real GET of the URL (so a
// wrong or spent bundle URL fails the pod the way busybox fails it, and a single-use URL is
// used up), with busybox's words for each failure.

/** The body, or what busybox prints to stderr for the failure (it then exits 1). */
export async function fetchUrl(url: string, signal: AbortSignal): Promise<{ body: Buffer } | { error: string }> {
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
    return { error: "wget: connection closed prematurely\n" };
  }
}
