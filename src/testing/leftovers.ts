/**
 * A test process killed outright (SIGKILL, a CI job cancelled) runs no cleanup of its own. Its
 * runners still end, since each one stops when its parent's IPC channel closes, but their
 * temporary directories stay. Each directory names the process that made it; the next
 * `startTestRunner` on the machine removes those whose maker is gone.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const DIRECTORY_PREFIX = "k8s-runner-test-";
const OWNER_FILE = "owner.pid";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user holds the pid, so it is alive.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Marks `directory` as made by this process. */
export function claimDirectory(directory: string): Promise<void> {
  return writeFile(join(directory, OWNER_FILE), String(process.pid));
}

/** Removes the test runners' directories whose maker is no longer running. */
export async function removeAbandonedDirectories(): Promise<void> {
  const root = tmpdir();
  const names = (await readdir(root).catch(() => [])).filter((name) => name.startsWith(DIRECTORY_PREFIX));
  for (const name of names) {
    const owner = Number(await readFile(join(root, name, OWNER_FILE), "utf8").catch(() => "NaN"));
    // A directory with no owner yet may be one a runner is setting up at this moment.
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) await rm(join(root, name), { recursive: true, force: true });
  }
}
