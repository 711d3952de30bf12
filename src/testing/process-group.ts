/**
 * The runner leads a process group (forked `detached`): its supervisor, its simulated cluster
 * and anything they started belong to it, so the group is what `stop()` ends and waits for.
 */
import { readdir, readFile } from "node:fs/promises";

export function signalGroup(leader: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-leader, signal);
  } catch {
    // the group is already gone
  }
}

/**
 * The group's processes that still run. A zombie no longer runs: one orphaned inside a container
 * whose init does not reap can stay a zombie for good. Read from /proc (Linux); elsewhere
 * the group's existence is all that can be asked.
 */
export async function liveMembers(leader: number): Promise<number[]> {
  const pids = await readdir("/proc").catch(() => undefined);
  if (pids === undefined) {
    try {
      process.kill(-leader, 0);
      return [leader];
    } catch {
      return [];
    }
  }
  const live: number[] = [];
  for (const pid of pids.filter((name) => /^\d+$/.test(name))) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    // After the command name in parentheses: state, ppid, pgrp.
    const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(group) === leader && state !== "Z" && state !== "X") live.push(Number(pid));
  }
  return live;
}

/** Kills what is left of the group and waits, up to `boundMs`, until none of it runs. */
export async function endGroup(leader: number, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    if ((await liveMembers(leader)).length === 0) return;
    signalGroup(leader, "SIGKILL");
    if (Date.now() > deadline) throw new Error(`processes of the test runner's group ${leader} outlived SIGKILL`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
