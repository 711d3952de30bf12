/**
 * Holds processes to a small share of one core, the way a container's CPU limit throttles it: a
 * CPU cgroup (v1, CFS bandwidth) with a quota per period. The processes run in short bursts and
 * wait the rest of each period, so their timers fire late and their renewals come late: a busy
 * node's replica. Needs root and the cgroup v1 CPU controller, which these machines have; a test
 * without them fails saying so in one line.
 */
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

const CPU_CGROUPS = "/sys/fs/cgroup/cpu";
const PERIOD_US = 100_000;

export type Starved = { release(): Promise<void> };

/** The CPU cgroup `pid` is in now, as a directory under the controller's mount. */
async function cpuCgroupOf(pid: number): Promise<string> {
  const lines = (await readFile(`/proc/${pid}/cgroup`, "utf8")).split("\n");
  const path = lines.map((line) => line.split(":")).find(([, controllers]) => controllers?.split(",").includes("cpu"))?.[2];
  return join(CPU_CGROUPS, path ?? "/");
}

/** Moves `pids` into a new cgroup allowed `share` of one core (0 < share ≤ 1) until `release()`. */
export async function starve(pids: number[], share: number, name: string): Promise<Starved> {
  const group = join(CPU_CGROUPS, `k8s-runner-test-${process.pid}-${name}`);
  const homes = await Promise.all(pids.map(async (pid) => [pid, await cpuCgroupOf(pid)] as const));
  try {
    await mkdir(group);
  } catch (error) {
    throw new Error(`a CPU cgroup is needed to starve a replica (root and the cgroup v1 cpu controller at ${CPU_CGROUPS}): ${(error as Error).message}`);
  }
  await writeFile(join(group, "cpu.cfs_period_us"), String(PERIOD_US));
  await writeFile(join(group, "cpu.cfs_quota_us"), String(Math.max(1_000, Math.round(share * PERIOD_US))));
  for (const pid of pids) await writeFile(join(group, "cgroup.procs"), String(pid));
  return {
    async release() {
      // Each back where it was; a process that exited meanwhile has nothing to move.
      for (const [pid, home] of homes) await writeFile(join(home, "cgroup.procs"), String(pid)).catch(() => undefined);
      await rmdir(group);
    },
  };
}
