/**
 * The request id: the api process gives every request one (or keeps the caller's
 * `x-request-id`), carries it to the supervisor in the same header, and both processes hold
 * it in async context while they work on the request, so every log line written on its
 * behalf, in either process, names it without being handed it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import * as v from "valibot";

export const REQUEST_ID_HEADER = "x-request-id";

/** What a caller may choose as its id: short and plain, so it cannot forge log structure. */
const RequestIdSchema = v.pipe(v.string(), v.regex(/^[\w.:-]{1,64}$/));

const context = new AsyncLocalStorage<string>();

/** The caller's id if it is acceptable, else a fresh one. */
export function requestIdFrom(header: unknown): string {
  const parsed = v.safeParse(RequestIdSchema, header);
  return parsed.success ? parsed.output : randomUUID();
}

/** Runs `work` (and everything it starts) on behalf of request `id`. */
export function withRequestId<T>(id: string, work: () => T): T {
  return context.run(id, work);
}

export function currentRequestId(): string | undefined {
  return context.getStore();
}

/** The header that carries the current request's id onward (to the supervisor); none outside a request. */
export function requestIdHeaders(): Record<string, string> {
  const id = currentRequestId();
  return id === undefined ? {} : { [REQUEST_ID_HEADER]: id };
}
