/**
 * `tsx bench/heap-snapshots.ts [N]`: heap snapshots of the api and the supervisor, idle and then
 * with N live sessions (200 unless given), each with a terminal and an event subscriber as in
 * section 3. Open a pair in Chrome DevTools' Memory tab and compare them ("Comparison") to see
 * what a live session holds on each heap (docs/benchmarks-relay.md "Why the missed targets are
 * missed").
 * The processes write the snapshots into their working directory, the repository's root.
 * Writing a snapshot raises a process's RSS for good, so only the first RSS printed is a memory
 * figure; section 3 is the one to read for RSS.
 */
import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { compileRunner } from "./support/build.ts";
import { API_ENTRY, residentBytes, startBenchRunner, SUPERVISOR_ENTRY } from "./support/runner.ts";
import { openLive } from "./scale.ts";
import { inBatches } from "./support/sessions.ts";
import { MiB } from "./support/stats.ts";

const sessions = Number(process.argv[2] ?? 200);
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const snapshotsIn = async () => new Set((await readdir(ROOT)).filter((name) => name.endsWith(".heapsnapshot")));

await compileRunner([API_ENTRY, SUPERVISOR_ENTRY]);
process.env.BENCH_NODE_ARGS = `${process.env.BENCH_NODE_ARGS ?? ""} --heapsnapshot-signal=SIGUSR2`;
const runner = await startBenchRunner({ mode: "compiled" });

/** Signals both processes (each collects, then writes) and waits for both files. */
async function snapshot(label: string): Promise<void> {
  const before = await snapshotsIn();
  const rss = { api: await residentBytes(runner.apiPid), supervisor: await residentBytes(runner.supervisorPid) };
  process.kill(runner.apiPid, "SIGUSR2");
  process.kill(runner.supervisorPid, "SIGUSR2");
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const written = [...(await snapshotsIn())].filter((name) => !before.has(name));
    if (written.length < 2) continue;
    console.log(`${label}: RSS api ${(rss.api / MiB).toFixed(1)} MiB (pid ${runner.apiPid}), supervisor ${(rss.supervisor / MiB).toFixed(1)} MiB (pid ${runner.supervisorPid}); ${written.join(", ")}`);
    return;
  }
}

try {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await snapshot("idle");
  const live = await inBatches(Array.from({ length: sessions }), 25, () => openLive(runner));
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await snapshot(`${sessions} live sessions`);
  for (const entry of live) {
    entry.stopEvents();
    entry.terminal.close();
  }
} finally {
  await runner.close();
}
