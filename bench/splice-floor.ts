/**
 * `npx tsx bench/splice-floor.ts [--keys N]`: what one more process on a keystroke's path costs
 * on this machine, whatever that process does. One byte goes to an echo server and back: directly,
 * through one process that only pipes bytes between two TCP sockets (`socket.pipe`, no parsing:
 * the least any relay does), and through two such processes. The echo server and each pipe are
 * processes of their own, as the simulated cluster, the api and the supervisor are. The steps
 * between the three rows are the floor under what the api's splice can add to the terminal's
 * round trip (docs/benchmarks-relay.md, "What one process more costs").
 *
 * Then the CPU such a pipe spends per KiB: chunks of CHUNK bytes sent one at a time through one
 * pipe to the echo server and back (each crosses the pipe twice), with the pipe process's CPU time
 * read from /proc: the floor under the api's "CPU per KiB relayed" for chunks of that size (section
 * 4's output chunks average about 3.4 KiB).
 *
 * Prints one JSON line: p50 and p99 round trip in ms for 0, 1 and 2 pipes, the pipe's CPU µs per
 * KiB and per chunk, and the load average.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { loadavg } from "node:os";
import { connect, type Socket } from "node:net";
import { cpuMs } from "./support/runner.ts";
import { percentile } from "./support/stats.ts";

const keysAt = process.argv.indexOf("--keys");
const KEYS = keysAt >= 0 ? Number(process.argv[keysAt + 1]) : 3000;
const WARM_UP = 200;
const CHUNK = 3400;
const CHUNKS = 5000;

const ECHO = `const s = require("node:net").createServer({ noDelay: true }, (c) => c.pipe(c)).listen(0, "127.0.0.1", () => console.log(s.address().port));`;
const PIPE = (port: number) =>
  `const net = require("node:net"); const s = net.createServer({ noDelay: true }, (c) => { const u = net.connect({ port: ${port}, host: "127.0.0.1", noDelay: true }); c.pipe(u).pipe(c); c.on("error", () => u.destroy()); u.on("error", () => c.destroy()); }).listen(0, "127.0.0.1", () => console.log(s.address().port));`;

const children: ChildProcess[] = [];

/** Starts `code` in a Node process of its own; resolves with the port it prints. */
function listening(code: string): Promise<{ port: number; pid: number }> {
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.once("data", (chunk: Buffer) => resolve({ port: Number(chunk.toString().trim()), pid: child.pid! }));
    child.once("exit", (code) => reject(new Error(`exited ${code}`)));
  });
}

/** Round trips of one byte each over `socket`, in ms. */
/** Sends `chunks` chunks of `size` bytes one at a time, each after the previous one came back whole. */
async function chunkTrips(socket: Socket, chunks: number, size: number): Promise<void> {
  const chunk = Buffer.alloc(size, 0x61);
  for (let i = 0; i < chunks; i++) {
    await new Promise<void>((resolve) => {
      let back = 0;
      const onData = (data: Buffer) => {
        back += data.byteLength;
        if (back < size) return;
        socket.off("data", onData);
        resolve();
      };
      socket.on("data", onData);
      socket.write(chunk);
    });
  }
}

async function roundTrips(socket: Socket, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const began = performance.now();
    await new Promise<void>((resolve) => {
      socket.once("data", () => resolve());
      socket.write("x");
    });
    times.push(performance.now() - began);
  }
  return times;
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", noDelay: true }, () => resolve(socket));
    socket.once("error", reject);
  });
}

try {
  const echo = await listening(ECHO);
  const one = await listening(PIPE(echo.port));
  const two = await listening(PIPE(one.port));
  const paths = { direct: await open(echo.port), onePipe: await open(one.port), twoPipes: await open(two.port) };
  const samples: Record<keyof typeof paths, number[]> = { direct: [], onePipe: [], twoPipes: [] };
  for (const socket of Object.values(paths)) await roundTrips(socket, WARM_UP);
  const load = loadavg()[0]!;
  // Alternated in batches, so a burst of load falls on all three alike.
  for (let done = 0; done < KEYS; done += 25) {
    for (const [name, socket] of Object.entries(paths) as Array<[keyof typeof paths, Socket]>) samples[name].push(...(await roundTrips(socket, 25)));
  }
  const summary = Object.fromEntries(
    Object.entries(samples).map(([name, times]) => {
      const sorted = times.sort((a, b) => a - b);
      return [name, { p50: +percentile(sorted, 50).toFixed(3), p99: +percentile(sorted, 99).toFixed(3) }];
    }),
  );
  const cpuBefore = await cpuMs(one.pid);
  await chunkTrips(paths.onePipe, CHUNKS, CHUNK);
  const pipeCpuUs = (await cpuMs(one.pid) - cpuBefore) * 1000;
  const crossings = CHUNKS * 2;
  const pipe = { chunkBytes: CHUNK, cpuUsPerChunk: Math.round(pipeCpuUs / crossings), cpuUsPerKiB: +(pipeCpuUs / ((crossings * CHUNK) / 1024)).toFixed(1) };
  for (const socket of Object.values(paths)) socket.destroy();
  console.log(JSON.stringify({ keys: KEYS, load: Math.round(load * 100) / 100, ...summary, pipe }));
} finally {
  for (const child of children) child.kill("SIGKILL");
}
