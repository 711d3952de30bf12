// Reachability against real listeners on loopback. Timings are shortened for the test; the
// assertions are on the order of reported states, never on how long anything took.
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ReachabilityState } from "../../../src/contract/wire.ts";
import { watchReachability } from "../../../src/kube/io/reachability.ts";
import { waitFor } from "../../support/wait.ts";
import { freePort } from "../../support/ports.ts";

const FAST = { connectTimeoutMs: 500, retryMs: 10, unreachableAfterMs: 60_000, slowRetryMs: 10 };

const servers: Server[] = [];
const aborts: AbortController[] = [];

afterEach(async () => {
  for (const a of aborts.splice(0)) a.abort();
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function listen(port = 0, host = "127.0.0.1"): Promise<number> {
  const server = createServer((socket) => socket.destroy());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, host, () => resolve()));
  return (server.address() as { port: number }).port;
}

function watch(host: string | undefined, ports: number[], timings: Partial<typeof FAST> = FAST) {
  const events: [number, ReachabilityState][] = [];
  const controller = new AbortController();
  aborts.push(controller);
  watchReachability(host, ports, (port, state) => events.push([port, state]), controller.signal, timings);
  const statesOf = (port: number) => events.filter(([p]) => p === port).map(([, s]) => s);
  return { events, statesOf, controller };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

describe("watchReachability", () => {
  it("reports checking, then reachable once, for a port that is already listening", async () => {
    const port = await listen();
    const { statesOf } = watch("127.0.0.1", [port]);
    await waitFor("reachable", () => statesOf(port).includes("reachable"));
    await settle();
    expect(statesOf(port)).toEqual(["checking", "reachable"]);
  });

  it("watches ports in parallel: one reachable while the other keeps checking", async () => {
    const open = await listen();
    const closed = await freePort();
    const { statesOf, controller } = watch("127.0.0.1", [closed, open]);
    await waitFor("the open port reachable", () => statesOf(open).includes("reachable"));
    controller.abort();
    await settle();
    expect(statesOf(open)).toEqual(["checking", "reachable"]);
    expect(statesOf(closed)).toEqual(["checking"]);
  });

  it("reports unreachable once after the grace period, then flips to reachable when the port opens", async () => {
    const port = await freePort();
    const { statesOf } = watch("127.0.0.1", [port], { ...FAST, unreachableAfterMs: 50 });
    await waitFor("unreachable", () => statesOf(port).includes("unreachable"));
    // Several slow retries fail before the listener appears; unreachable is still reported once.
    await settle();
    await listen(port);
    await waitFor("reachable", () => statesOf(port).includes("reachable"));
    await settle();
    expect(statesOf(port)).toEqual(["checking", "unreachable", "reachable"]);
  });

  it("reports every port unreachable at once when the pod IP is unknown", () => {
    const { events } = watch(undefined, [8080, 9090]);
    expect(events).toEqual([
      [8080, "unreachable"],
      [9090, "unreachable"],
    ]);
  });

  it("stops silently when aborted: a port that opens afterwards is not reported", async () => {
    const port = await freePort();
    const { statesOf, controller } = watch("127.0.0.1", [port], { ...FAST, unreachableAfterMs: 0 });
    await waitFor("unreachable", () => statesOf(port).includes("unreachable"));
    controller.abort();
    await listen(port);
    await settle();
    expect(statesOf(port)).toEqual(["checking", "unreachable"]);
  });

  it("reports nothing when the signal is already aborted", () => {
    const controller = new AbortController();
    controller.abort();
    const events: unknown[] = [];
    watchReachability(undefined, [8080], (...e) => events.push(e), controller.signal);
    watchReachability("127.0.0.1", [8080], (...e) => events.push(e), controller.signal);
    expect(events).toEqual([]);
  });

  it("dials the given host, not just any loopback address", async () => {
    const port = await listen(0, "127.0.0.2");
    const { statesOf, controller } = watch("127.0.0.3", [port], { ...FAST, unreachableAfterMs: 0 });
    await waitFor("unreachable on the wrong address", () => statesOf(port).includes("unreachable"));
    controller.abort();
    const right = watch("127.0.0.2", [port]);
    await waitFor("reachable on the pod's address", () => right.statesOf(port).includes("reachable"));
    expect(right.statesOf(port)).toEqual(["checking", "reachable"]);
  });
});

describe("watchReachability while the kernel boots", () => {
  it("starts the grace period only once the kernel has booted", async () => {
    const port = await freePort();
    const timings = { ...FAST, unreachableAfterMs: 0 };
    // Without a boot to wait for, a closed port is unreachable at the first failed attempt.
    const control = watch("127.0.0.1", [port], timings);
    let boot!: () => void;
    const booted = new Promise<void>((resolve) => (boot = resolve));
    const events: ReachabilityState[] = [];
    const controller = new AbortController();
    aborts.push(controller);
    watchReachability("127.0.0.1", [port], (_port, state) => events.push(state), controller.signal, timings, booted);
    await waitFor("the control's unreachable", () => control.statesOf(port).includes("unreachable"));
    // Still booting: however many attempts failed, the port has not failed to listen yet.
    expect(events).toEqual(["checking"]);
    boot();
    await waitFor("unreachable after the boot", () => events.includes("unreachable"));
    expect(events).toEqual(["checking", "unreachable"]);
  });
});
