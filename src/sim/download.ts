// Init containers that fetch something (`wget -qO <file> "<url>"`, the runner's body-fetch and
// context-fetch) really fetch it, so a wrong or spent bundle URL fails the pod the way busybox
// wget fails it, and a single-use URL is used up.
import { gunzipSync } from "node:zlib";

/** The URL a `wget` in the container's command line downloads, if any. */
export function downloadUrl(argv: string[]): string | undefined {
  const line = argv.join(" ");
  const m = /\bwget\b[^;&|]*?["']?(https?:\/\/[^\s"']+)/.exec(line);
  return m?.[1];
}

export interface DownloadResult {
  exitCode: number;
  stderr?: string;
}

/** Downloads like busybox wget (30 s budget); a `tar xz` after it also needs a gzip body. */
export async function download(url: string, argv: string[], signal: AbortSignal): Promise<DownloadResult> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(30_000)]) });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === "TimeoutError") return { exitCode: 1, stderr: "wget: download timed out\n" };
    const host = new URL(url).hostname;
    if (e.cause?.code === "ENOTFOUND" || e.cause?.code === "EAI_AGAIN") return { exitCode: 1, stderr: `wget: bad address '${host}'\n` };
    return { exitCode: 1, stderr: `wget: can't connect to remote host (${host}): Connection refused\n` };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { exitCode: 1, stderr: `wget: server returned error: HTTP/1.1 ${res.status} ${res.statusText}\n` };
  }
  const body = Buffer.from(await res.arrayBuffer());
  if (/\btar\b[^;&|]*\bx\w*z/.test(argv.join(" "))) {
    try {
      gunzipSync(body);
    } catch {
      return { exitCode: 1, stderr: "tar: invalid magic\ntar: short read\n" };
    }
  }
  return { exitCode: 0 };
}
