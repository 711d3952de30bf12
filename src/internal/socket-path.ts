/**
 * The internal socket's place on a shared host (docs/operating.md "Threat model"). The default directory lives in
 * the world-writable $TMPDIR, so another user could create it first and put a listener of their
 * own where the api process sends session env values: a directory that is not ours, not a real
 * directory, or writable by others is refused. A socket file another live runner serves is never
 * taken over; only a stale one (nobody accepts on it) is removed before listening.
 */
import { lstat, mkdir, rm } from "node:fs/promises";
import { connect } from "node:net";
import { dirname } from "node:path";

export class UnsafeSocketError extends Error {
  override name = "UnsafeSocketError";
}

/** Creates `dir` (mode 0700) if missing, then checks it is a directory only this user can write. */
export async function ensurePrivateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stats = await lstat(dir);
  if (!stats.isDirectory()) throw new UnsafeSocketError(`internal socket directory ${dir} is not a directory (a symlink?); remove it or set RUNNER_INTERNAL_SOCKET`);
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new UnsafeSocketError(`internal socket directory ${dir} belongs to uid ${stats.uid}, not to this user (${uid}); remove it or set RUNNER_INTERNAL_SOCKET`);
  }
  if ((stats.mode & 0o022) !== 0) {
    throw new UnsafeSocketError(`internal socket directory ${dir} is writable by others (mode ${(stats.mode & 0o777).toString(8)}); remove it or set RUNNER_INTERNAL_SOCKET`);
  }
}

/** True when something accepts connections on the socket at `path`. */
export function socketServed(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Makes `path` free to listen on: refuses a live socket or a file that is not a socket, removes a stale one. */
export async function claimSocketPath(path: string): Promise<void> {
  const stats = await lstat(path).catch(() => undefined);
  if (!stats) return;
  if (!stats.isSocket()) throw new UnsafeSocketError(`${path} exists and is not a socket; refusing to replace it`);
  if (await socketServed(path)) {
    throw new UnsafeSocketError(`another runner's supervisor is serving ${path}; stop it or give this runner its own RUNNER_INTERNAL_SOCKET (or PORT)`);
  }
  await rm(path, { force: true });
}

/**
 * Readies the supervisor's socket path before anything else happens at boot (before it
 * re-adopts or reaps pods, which a runner that is not going to serve must not do).
 */
export async function prepareSocketPath(path: string, sharedPlace: boolean): Promise<void> {
  if (sharedPlace) await ensurePrivateDirectory(dirname(path));
  else await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await claimSocketPath(path);
}
