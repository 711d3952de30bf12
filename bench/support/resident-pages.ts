/**
 * Memory a group of processes holds, each physical page counted once. Summed VmRSS counts a
 * page every process maps once per process: the node binary's code and read-only data (about
 * 40 MiB of each runner process) are one set of pages in the page cache, and the kernel (and a
 * pod's memory cgroup, which charges a file page to one container) holds them once. Two
 * processes of one program therefore read about 40 MiB more in summed VmRSS than the memory
 * they take. This reads each process's page table (/proc/<pid>/pagemap) and counts distinct
 * page frames. Frame numbers need CAP_SYS_ADMIN; without it the kernel reports them as 0, and
 * this answers undefined rather than a wrong figure.
 */
import { open, readFile } from "node:fs/promises";

const PAGE = 4096;
const PRESENT = 1n << 63n;
const FRAME_MASK = (1n << 55n) - 1n;

/** The address ranges of `pid` that have resident pages (from /proc/<pid>/smaps). */
async function residentRanges(pid: number): Promise<Array<{ start: number; end: number }>> {
  const smaps = await readFile(`/proc/${pid}/smaps`, "utf8");
  const ranges: Array<{ start: number; end: number; rss: number }> = [];
  for (const line of smaps.split("\n")) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range) ranges.push({ start: parseInt(range[1]!, 16), end: parseInt(range[2]!, 16), rss: 0 });
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && ranges.length > 0) ranges.at(-1)!.rss = Number(rss[1]);
  }
  return ranges.filter((range) => range.rss > 0);
}

/** Adds the frame numbers of `pid`'s resident pages to `frames`; false when the kernel hides them. */
async function addFrames(pid: number, frames: Set<bigint>): Promise<boolean> {
  const ranges = await residentRanges(pid);
  const pagemap = await open(`/proc/${pid}/pagemap`, "r");
  try {
    let visible = false;
    for (const { start, end } of ranges) {
      const pages = (end - start) / PAGE;
      const entries = Buffer.alloc(pages * 8);
      await pagemap.read(entries, 0, entries.byteLength, (start / PAGE) * 8);
      for (let page = 0; page < pages; page++) {
        const entry = entries.readBigUInt64LE(page * 8);
        if ((entry & PRESENT) === 0n) continue;
        const frame = entry & FRAME_MASK;
        if (frame === 0n) continue;
        visible = true;
        frames.add(frame);
      }
    }
    return visible;
  } finally {
    await pagemap.close();
  }
}

/** Bytes of the distinct physical pages resident in `pids`; undefined where frame numbers cannot be read. */
export async function distinctResidentBytes(pids: Iterable<number>): Promise<number | undefined> {
  const frames = new Set<bigint>();
  try {
    for (const pid of pids) if (!(await addFrames(pid, frames))) return undefined;
  } catch {
    return undefined;
  }
  return frames.size * PAGE;
}
