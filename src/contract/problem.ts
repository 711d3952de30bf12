/**
 * The one error type of the runner. The session core raises a Problem: what kind of refusal
 * it is, the contract's error code and a message, never an HTTP status. Only the edges (the
 * supervisor's internal server, the api's error handler) turn it into an answer, through
 * `problemAnswer`, so the mapping from kind to status is written once.
 */
import { internalError } from "./validation.ts";

export type ProblemKind =
  | "invalid"
  | "not_found"
  | "conflict"
  | "terms_required"
  | "rate_limited"
  | "unavailable"
  /** The backend refused an action the client asked for (`stop_failed`, `set_apps_failed`). */
  | "failed"
  /** An unexpected fault; answered in the framework's 500 shape. */
  | "internal";

const STATUS_OF: Record<ProblemKind, number> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  terms_required: 428,
  rate_limited: 429,
  unavailable: 503,
  failed: 500,
  internal: 500,
};

export class Problem extends Error {
  override name = "Problem";
  constructor(
    readonly kind: ProblemKind,
    readonly code: string,
    message: string,
    /** Fields that stand in for `message` in the body (only `terms` on 428, docs/api.md "Error bodies"). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A non-Error thrown value or an Error, as the message a Problem carries. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The HTTP answer of a Problem: its status and the contract's error body. */
export function problemAnswer(problem: Problem): { status: number; body: Record<string, unknown> } {
  const status = STATUS_OF[problem.kind];
  if (problem.kind === "internal") return { status, body: internalError(problem.message) };
  const body = problem.details ? { error: problem.code, ...problem.details } : { error: problem.code, message: problem.message };
  return { status, body };
}

/**
 * A non-2xx answer as a client receives it: its status and the runner's JSON error body. The
 * api process relays one from the supervisor unchanged; the typed client raises it to callers.
 */
export class RunnerError extends Error {
  override name = "RunnerError";
  constructor(
    readonly status: number,
    readonly body: { error?: string; message?: string; [key: string]: unknown } | undefined,
  ) {
    super(`runner returned HTTP ${status}${body?.message ? `: ${body.message}` : body?.error ? `: ${body.error}` : ""}`);
  }
}

/** Whether a refusal says the session is between runner replicas (a retry will find its owner). */
export function isSessionMoving(error: unknown): boolean {
  return error instanceof RunnerError && error.status === 503 && error.body?.error === "session_moving";
}

/** The JSON error body of an answer, or its text as the message when it is not JSON. */
export function errorBodyOf(text: string): RunnerError["body"] {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as RunnerError["body"];
  } catch {
    return { message: text };
  }
}
