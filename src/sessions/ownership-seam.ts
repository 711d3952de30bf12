/**
 * The ownership seam (docs/architecture.md "The ownership seam"): the one answer, in every part of
 * the supervisor and the backend, to "may this process act on this session now?". Given to each
 * part when it is built. Two implementations: one replica alone owns every session
 * (`sole-ownership.ts`); several replicas own sessions by the Leases of their shards
 * (`src/replicas/coordinator.ts`). Both run the same session code: nothing outside them asks how
 * many replicas there are.
 */
import type { PlacementAnswer } from "../contract/responses.ts";

/**
 * Who writes a session's pod, and under which term of its shard's Lease (docs/replicas.md
 * "Fencing on the pod"). `alone`: the only replica there is; it stamps nothing and acts on any
 * pod, whatever an earlier install of several replicas stamped on it.
 */
export type Writer = { holder: string; term: number; alone?: true };

/** What the supervisor does when sessions become, or stop being, this process's. */
export type OwnershipHooks = {
  /**
   * Sessions `which` selects are no longer this process's, or are about to stop being (a planned
   * move, an exit): stop acting on them, their pods left running. `unhurried`: they stay held
   * until this is done, so saving their stream positions may take as long as it takes.
   */
  letGo(which: (sessionId: string) => boolean, unhurried: boolean): Promise<void>;
  /** Sessions `which` selects are this process's now: take them over from their pods. */
  takeOver(which: (sessionId: string) => boolean): Promise<void>;
  /** The installation's singleton duties (reaping what no session explains, the warm pool's refill) are this process's. */
  dutiesGained(): Promise<void>;
  /** The duties were lost, or are about to be given up. */
  dutiesLost(): void;
};

export interface SessionOwnership {
  /**
   * Requests for the session are served here now: it is this process's and taken over. Until
   * then a request is answered "moving", never "not found".
   */
  serves(sessionId: string): boolean;
  /**
   * This process still holds the session, judged now on the monotonic clock: asked before every
   * byte that goes to its pod (stdin, resize) or to its clients (terminal output, events). A
   * process that finds it does not stops serving the session there and then, its buffers dropped.
   */
  holds(sessionId: string): boolean;
  /** The writer a pod write of the session stamps (undefined: this process may not write it now). */
  writerFor(sessionId: string): Writer | undefined;
  /** A fenced write found the session's pod another process's: let the session go. */
  lost(sessionId: string): void;
  /** A fresh session id this process owns, so that the process that admits a session also serves it; undefined while it owns none. */
  mintSessionId(newId: () => string): string | undefined;
  /** Where each session is served, for the api's forwarding; `version` grows with each change. */
  placement(): PlacementAnswer;
  /** `listener` runs whenever the placement changes; returns its removal. */
  onPlacementChange(listener: () => void): () => void;
  /** Another replica says sessions changed hands: look again now. */
  nudge(): void;
  /** Takes up what is this process's (its sessions, the duties, through `hooks`), then keeps it current. */
  start(hooks: OwnershipHooks): Promise<void>;
  /** A graceful exit: every session let go and handed to whoever takes it next. */
  leave(): Promise<void>;
}
