/**
 * @hono/node-ws builds an `ErrorEvent` for every WebSocket protocol error (an oversized or
 * malformed frame), and Node 20 has no such global: the constructor threw a ReferenceError, the
 * route's onError never ran and its cleanup with it. A minimal one, installed
 * only where the runtime lacks it.
 */
class RunnerErrorEvent extends Event {
  readonly error: unknown;
  readonly message: string;

  constructor(type: string, init: { bubbles?: boolean; cancelable?: boolean; error?: unknown; message?: string } = {}) {
    super(type, init);
    this.error = init.error;
    this.message = init.message ?? (init.error instanceof Error ? init.error.message : "");
  }
}

if (typeof (globalThis as { ErrorEvent?: unknown }).ErrorEvent === "undefined") {
  Object.defineProperty(globalThis, "ErrorEvent", { value: RunnerErrorEvent, writable: true, configurable: true });
}
