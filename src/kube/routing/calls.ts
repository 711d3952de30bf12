/**
 * The routing layer's API calls (docs/kubernetes.md "Services and routes"): each with a deadline, and the
 * create-or-replace every published object goes through.
 */
import { withDeadline } from "../cluster/api.ts";
import { isConflict, isNotFound } from "../status/api-error.ts";

/**
 * The typed calls have no timeout of their own; a hung API server must not hang a session start,
 * a reload or a route-health poll (the call itself is not cancelled).
 */
const CALL_DEADLINE_MS = 10_000;
/** Rounds of create → read → replace before a create-or-replace gives up (see createOrReplace). */
const REPLACE_ROUNDS = 3;

export function timed<T>(call: Promise<T>, what: string): Promise<T> {
  return withDeadline(call, CALL_DEADLINE_MS, what);
}

export async function ignoringNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

export async function readOrUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Create; on 409 read the existing object and replace it (`replace` carries over what must be
 * kept). The object can vanish between create and read (the garbage collector removing it with
 * a previous pod), and a replace can meet a newer resourceVersion (a controller writing its
 * status): both start the round over, a bounded number of times; every other error propagates.
 */
export async function createOrReplace<T>(ops: {
  create(): Promise<unknown>;
  read(): Promise<T>;
  replace(existing: T): Promise<unknown>;
}): Promise<void> {
  for (let round = 1; ; round++) {
    try {
      await ops.create();
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    try {
      await ops.replace(await ops.read());
      return;
    } catch (err) {
      if (round >= REPLACE_ROUNDS || !(isNotFound(err) || isConflict(err))) throw err;
    }
  }
}
