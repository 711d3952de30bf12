/**
 * The session registry (docs/api.md "The registry"): capacity over every retained entry, eviction
 * of the oldest reclaimable one (terminal by exitedAt, suspended by when it went idle), and
 * the retention timers armed by status changes. Timers never keep the process alive.
 */
import { isTerminal, type RunStatus } from "../contract/wire.ts";
import { sessionEvicted } from "../metrics/figures.ts";
import type { Session } from "./session.ts";

export type RegistryLimits = {
  maxSessions: number;
  exitTtlMs: number;
  suspendedTtlMs: number;
};

export class Registry {
  readonly #sessions = new Map<string, Session>();
  readonly #timers = new Map<string, NodeJS.Timeout>();

  constructor(readonly limits: RegistryLimits) {}

  get(id: string): Session | undefined {
    return this.#sessions.get(id);
  }

  all(): Session[] {
    return [...this.#sessions.values()];
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Live watch sessions: mode watch, not terminal, not suspended (docs/api.md "Creating a session"). */
  liveWatchCount(): number {
    return this.all().filter(
      (session) => session.mode === "watch" && !session.terminal && session.status.kind !== "suspended",
    ).length;
  }

  /** Registers the session, evicting one reclaimable entry if at capacity; false when full. */
  admit(session: Session): boolean {
    if (this.#sessions.size >= this.limits.maxSessions) {
      const victim = this.#oldestReclaimable();
      if (!victim) return false;
      this.evict(victim.id, "capacity");
    }
    this.#sessions.set(session.id, session);
    return true;
  }

  /** Registers a re-adopted session: it was admitted by an earlier process, so capacity does not apply. */
  restore(session: Session): void {
    this.#sessions.set(session.id, session);
  }

  /** Re-arms or cancels the retention timer after a status change (docs/api.md "The registry"). */
  statusChanged(session: Session, status: RunStatus, now: Date): void {
    if (isTerminal(status)) {
      session.exitedAt = now;
      this.#arm(session.id, this.limits.exitTtlMs);
    } else if (status.kind === "suspended") {
      session.suspendedAt = now.getTime();
      this.#arm(session.id, this.limits.suspendedTtlMs);
    } else {
      session.suspendedAt = undefined;
      this.#cancel(session.id);
    }
  }

  evict(id: string, reason: "capacity" | "expired"): void {
    const session = this.#sessions.get(id);
    this.#cancel(id);
    if (!session) return;
    sessionEvicted(reason);
    this.#sessions.delete(id);
    session.dispose();
  }

  /**
   * Another replica serves the session now: it leaves this registry without an end and its
   * followers are told to reconnect once they have what it holds. Its workload is the caller's
   * to let go (handed over or released, never stopped).
   */
  letGo(id: string): Session | undefined {
    const session = this.#sessions.get(id);
    this.#cancel(id);
    if (!session) return undefined;
    this.#sessions.delete(id);
    // Output merged but not yet in the ring goes in first: the ids saved at the handover count it.
    session.flushOutput();
    session.dispose("moved");
    return session;
  }

  #oldestReclaimable(): Session | undefined {
    const reclaimAt = (session: Session): number | undefined => {
      if (session.terminal) return session.exitedAt?.getTime() ?? 0;
      if (session.status.kind === "suspended") return session.suspendedAt ?? 0;
      return undefined;
    };
    let oldest: { session: Session; at: number } | undefined;
    for (const session of this.#sessions.values()) {
      const at = reclaimAt(session);
      if (at !== undefined && (!oldest || at < oldest.at)) oldest = { session, at };
    }
    return oldest?.session;
  }

  #arm(id: string, ms: number): void {
    this.#cancel(id);
    const timer = setTimeout(() => this.evict(id, "expired"), ms);
    timer.unref();
    this.#timers.set(id, timer);
  }

  #cancel(id: string): void {
    const timer = this.#timers.get(id);
    if (timer) clearTimeout(timer);
    this.#timers.delete(id);
  }
}
