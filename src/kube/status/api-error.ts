/**
 * Kubernetes API errors, summarised for clients (docs/kubernetes.md "Kubernetes API errors"). A reason never echoes the
 * Status `message`, headers, audit ids or ServiceAccount names — only the HTTP code and the
 * one-word Status reason — while the message is still read (never shown) to tell an exhausted
 * quota from missing RBAC. Logs keep the raw error as the `cause`.
 */
import * as v from "valibot";
import { parseJsonAs } from "../../contract/parse-json.ts";

/** The fields of a metav1.Status the runner reads; anything may be missing or mistyped. */
const statusBodySchema = v.looseObject({
  kind: v.optional(v.unknown()),
  reason: v.optional(v.unknown()),
  message: v.optional(v.unknown()),
  code: v.optional(v.unknown()),
  details: v.optional(v.unknown()),
});

export type StatusBody = v.InferOutput<typeof statusBodySchema>;

function isHttpStatus(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 100 && value <= 599;
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * The HTTP status of an error from any client-node generation: the first of `statusCode`,
 * `code` (ApiException), `response.statusCode` that is a number in 100..599. A string code
 * (`ECONNREFUSED`), a DOMException's `code` or a bare Error has none.
 */
export function httpStatusOf(err: unknown): number | undefined {
  const candidates = [field(err, "statusCode"), field(err, "code"), field(field(err, "response"), "statusCode")];
  return candidates.find(isHttpStatus);
}

/** The Status body: client-node leaves unrecognised codes (403 among them) as raw JSON text. */
export function statusBodyOf(err: unknown): StatusBody | undefined {
  const body = field(err, "body");
  if (typeof body === "string") return parseJsonAs(statusBodySchema, body);
  const parsed = v.safeParse(statusBodySchema, body);
  return parsed.success ? parsed.output : undefined;
}

export function isNotFound(err: unknown): boolean {
  return httpStatusOf(err) === 404;
}

export function isConflict(err: unknown): boolean {
  return httpStatusOf(err) === 409;
}

const QUOTA_MESSAGE = /exceeded quota|forbidden: failed quota/i;
const RBAC_MESSAGE = /\bis forbidden: User\b|\bcannot \w+ resource\b/i;

/** A client-safe sentence saying why the Kubernetes API refused (or never answered) a call. */
export function apiReason(err: unknown): string {
  const code = httpStatusOf(err);
  if (code === undefined) return "the Kubernetes API could not be reached";
  const body = statusBodyOf(err);
  const reason = body?.reason;
  const detail = typeof reason === "string" && reason !== "" ? `${reason}, HTTP ${code}` : `HTTP ${code}`;
  if (code === 401 || code === 403) {
    const message = typeof body?.message === "string" ? body.message : "";
    if (QUOTA_MESSAGE.test(message)) return `the session namespace's resource quota is exhausted (${detail})`;
    if (message === "" || RBAC_MESSAGE.test(message)) {
      return `the runner is not permitted to do this (${detail}). The cluster operator must check the runner's RBAC.`;
    }
  }
  return `the Kubernetes API rejected the request (${detail})`;
}

/** `<action>: <apiReason>`, the message of every start failure caused by an API call. */
export function apiFailureMessage(action: string, err: unknown): string {
  return `${action}: ${apiReason(err)}`;
}
