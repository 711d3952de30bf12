/**
 * A client's answer to a 503, which the contract makes "retry shortly" (with `retry-after`): a
 * session between replicas, or a request on a kept-alive connection to a replica whose
 * supervisor has just gone. Any other error ends the wait at once.
 */
import { RunnerError } from "../../src/client/index.ts";
import { GiveUp, waitFor } from "./wait.ts";

export function retryingOn503<T>(what: string, call: () => Promise<T>, timeoutMs: number): Promise<T> {
  return waitFor(what, () =>
    call().catch((error: unknown) => {
      if (error instanceof RunnerError && error.status === 503) return undefined;
      throw new GiveUp(`${what}: ${String(error)}`, { cause: error });
    }), timeoutMs);
}
