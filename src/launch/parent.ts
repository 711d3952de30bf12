/**
 * A child started by `npm start` (the supervisor, the simulated cluster) ends with its parent:
 * a killed api process would otherwise leave an orphan holding the bundle port,
 * which the next `npm start` then talks to. The IPC channel that `fork` opens closes when the
 * parent dies, however it dies (SIGKILL included); a process started any other way has no channel
 * and is unaffected.
 */
export function onParentGone(callback: () => void): void {
  if (!process.channel) return;
  // The channel must not keep the child alive by itself.
  process.channel.unref();
  process.once("disconnect", callback);
}

/**
 * Calls `stop` once, saying why: SIGTERM, SIGINT, or the parent that holds a channel to this
 * process gone (onParentGone). What asks again while it stops is ignored.
 */
export function onStopRequest(stop: (reason: string) => void): void {
  let stopping = false;
  const once = (reason: string) => {
    if (stopping) return;
    stopping = true;
    stop(reason);
  };
  process.once("SIGTERM", () => once("SIGTERM"));
  process.once("SIGINT", () => once("SIGINT"));
  onParentGone(() => once("parent process gone"));
}
