/** The refusals the supervisor's routes share (docs/api.md "The registry", "Watch sessions"). */
import { Problem } from "../contract/problem.ts";
import { publicFailure } from "../contract/public-error.ts";

export const sessionNotFound = (id: string): Problem => new Problem("not_found", "not_found", `session '${id}' not in registry`);

export const notAWatchSession = (): Problem =>
  new Problem("conflict", "not_a_watch_session", "this surface exists only on a watch session");

export const noLiveWorkspace = (): Problem => new Problem("conflict", "not_running", "session has no live workspace");

export const noLiveWorkload = (): Problem => new Problem("conflict", "not_running", "session has no live workload");

/** A workspace call the backend could not complete. */
export const workspaceFailure = (error: unknown): Problem => new Problem("internal", "internal", publicFailure("the workspace request", error));

/** Several replicas: this one holds no shard yet (it is starting or leaving); another will answer. */
export const notServingYet = (): Problem =>
  new Problem("unavailable", "not_ready", "this runner replica holds no sessions yet; retry in a moment");

/** Several replicas: the session's shard is held elsewhere or, for a moment, by nobody. */
export const servedElsewhere = (id: string): Problem =>
  new Problem("unavailable", "session_moving", `session '${id}' is being handed between runner replicas; retry in a moment`);
