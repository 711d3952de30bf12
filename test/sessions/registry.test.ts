import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { StartSpec } from "../../src/sessions/backend-seam.ts";
import { Registry } from "../../src/sessions/registry.ts";
import { MAX_CHUNK_BYTES, Session } from "../../src/sessions/session.ts";

let counter = 0;
function session(overrides: Partial<StartSpec> = {}): Session {
  counter += 1;
  return new Session({
    launch: {
      sessionId: `session${String(counter).padStart(5, "0")}`,
      createdAt: new Date().toISOString(),
      mode: "watch",
      apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
      env: {},
      config: { image: "i", pullPolicy: "missing" },
      bundle: { entryRelativePath: "telo.yaml", files: [] },
      inspect: true,
      selfContained: false,
      ...overrides,
    },
    agent: undefined,
    replayBufferBytes: 1_000_000,
    reloadLimit: 30,
    now: new Date(),
  });
}

describe("Registry", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const limits = { maxSessions: 2, exitTtlMs: 1_000, suspendedTtlMs: 5_000 };
  const setStatus = (registry: Registry, target: Session, status: Session["status"]) => {
    target.append({ type: "status", status });
    registry.statusChanged(target, status, new Date());
  };

  it("evicts a suspended session to admit a new one, never a live one", () => {
    const registry = new Registry(limits);
    const [live, idle] = [session(), session()];
    registry.admit(live);
    registry.admit(idle);
    setStatus(registry, live, { kind: "running" });
    expect(registry.admit(session())).toBe(false);
    setStatus(registry, idle, { kind: "suspended" });
    const next = session();
    expect(registry.admit(next)).toBe(true);
    expect(registry.get(idle.id)).toBeUndefined();
    expect(idle.disposed).toBe(true);
    expect(registry.get(live.id)).toBe(live);
  });

  it("keeps a suspended record with its own timer, cancelled by a later running", () => {
    const registry = new Registry(limits);
    const target = session();
    registry.admit(target);
    setStatus(registry, target, { kind: "suspended" });
    expect(target.exitedAt).toBeUndefined();
    vi.advanceTimersByTime(4_000);
    setStatus(registry, target, { kind: "running" });
    vi.advanceTimersByTime(10_000);
    expect(registry.get(target.id)).toBe(target);
    setStatus(registry, target, { kind: "suspended" });
    vi.advanceTimersByTime(5_001);
    expect(registry.get(target.id)).toBeUndefined();
  });

  it("evicts a terminal session after the exit TTL and stamps exitedAt", () => {
    const registry = new Registry(limits);
    const target = session({ mode: "run" });
    registry.admit(target);
    setStatus(registry, target, { kind: "exited", code: 0 });
    expect(target.exitedAt).toBeInstanceOf(Date);
    vi.advanceTimersByTime(1_001);
    expect(registry.get(target.id)).toBeUndefined();
  });

  it("counts live watch sessions only", () => {
    const registry = new Registry({ ...limits, maxSessions: 10 });
    const [running, suspended, ended, run] = [session(), session(), session(), session({ mode: "run" })];
    for (const entry of [running, suspended, ended, run]) registry.admit(entry);
    setStatus(registry, running, { kind: "running" });
    setStatus(registry, suspended, { kind: "suspended" });
    setStatus(registry, ended, { kind: "failed", message: "x" });
    expect(registry.liveWatchCount()).toBe(1);
  });
});

describe("Session output", () => {
  it("sends a turn's first chunk at once, merges the rest of the turn per app and stream, and flushes before any event", () => {
    const target = session({
      apps: [
        { name: "web", entryRelativePath: "a", ports: [], io: "streams" },
        { name: "api", entryRelativePath: "b", ports: [], io: "tty" },
      ],
    });
    for (const byte of "hello") target.pushOutput("web", Buffer.from(byte), "stdout");
    target.pushOutput("web", Buffer.from("!"), "stderr");
    target.pushOutput("api", Buffer.from("other app"), "tty");
    target.append({ type: "status", status: { kind: "exited", code: 0 } });
    const web = target.apps.get("web")!.bytes;
    expect([1, 2, 3].map((seq) => [web.get(seq)?.tag, web.get(seq)?.bytes.toString()])).toEqual([
      ["stdout", "h"],
      ["stdout", "ello"],
      ["stderr", "!"],
    ]);
    expect(target.apps.get("api")!.bytes.get(1)?.bytes.toString()).toBe("other app");
  });

  it("splits large chunks, keeps stream tags, and drops output for unknown apps", () => {
    const target = session({ apps: [{ name: "web", entryRelativePath: "a", ports: [], io: "streams" }] });
    target.pushOutput("web", Buffer.alloc(MAX_CHUNK_BYTES * 2 + 10), "stderr");
    target.pushOutput("other", Buffer.from("dropped"), "stdout");
    target.flushOutput();
    const bytes = target.apps.get("web")!.bytes;
    expect(bytes.nextId - 1).toBe(3);
    expect([1, 2, 3].map((seq) => bytes.get(seq)?.bytes.byteLength)).toEqual([MAX_CHUNK_BYTES, MAX_CHUNK_BYTES, 10]);
    expect(bytes.get(3)?.tag).toBe("stderr");
    expect(target.apps.has("other")).toBe(false);
    expect(target.soleApp?.name).toBe("web");
  });
});

describe("Session", () => {
  it("gives a resumed session a whole idle window from the resume", () => {
    const resumed = session();
    resumed.idleSince = 1_000;
    resumed.prepareResume({ files: [], at: 1_000 }, 90_000);
    expect(resumed.idleSince).toBe(90_000);
  });
});
