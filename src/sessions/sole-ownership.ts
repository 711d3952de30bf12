/**
 * The ownership of a runner that is one replica (no RUNNER_REPLICA_ID): every session is its own,
 * always, and so are the duties. At start it takes over every session its cluster holds, then does
 * the boot housekeeping; it never lets a session go, and its exit leaves the pods for the next
 * supervisor, which takes them over the same way.
 */
import type { PlacementAnswer } from "../contract/responses.ts";
import type { OwnershipHooks, SessionOwnership, Writer } from "./ownership-seam.ts";

const ALONE: Writer = { holder: "", term: 0, alone: true };
const PLACEMENT: PlacementAnswer = { shared: false };
const everySession = () => true;

export class SoleOwnership implements SessionOwnership {
  serves(): boolean {
    return true;
  }

  holds(): boolean {
    return true;
  }

  writerFor(): Writer {
    return ALONE;
  }

  /** Nothing to let go: no other replica can have stamped a pod since this one started. */
  lost(): void {}

  mintSessionId(newId: () => string): string {
    return newId();
  }

  placement(): PlacementAnswer {
    return PLACEMENT;
  }

  /** The placement of one replica never changes. */
  onPlacementChange(): () => void {
    return () => undefined;
  }

  nudge(): void {}

  async start(hooks: OwnershipHooks): Promise<void> {
    await hooks.takeOver(everySession);
    await hooks.dutiesGained();
  }

  async leave(): Promise<void> {}
}
