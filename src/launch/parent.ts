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
