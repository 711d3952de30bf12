// Kubernetes `Status` failure bodies, shaped as kube-apiserver shapes them, so clients that parse
// `reason`, `details` and `message` (client-node's ApiException body, kubectl's error printer)
// behave exactly as against a real cluster.

export interface StatusCause {
  field?: string;
  reason: string;
  message: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure" | "Success";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** Identifies a resource the way error messages name it: `pods`, `jobs.batch`. */
export interface ResourceRef {
  group: string;
  plural: string;
}

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): StatusBody {
    const body: StatusBody = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) body.details = this.details;
    return body;
  }
}

function qualifiedResource(ref: ResourceRef): string {
  return ref.group ? `${ref.plural}.${ref.group}` : ref.plural;
}

function details(ref: ResourceRef, name: string | undefined): StatusDetails {
  const d: StatusDetails = { kind: ref.plural };
  if (name !== undefined) d.name = name;
  if (ref.group) d.group = ref.group;
  return d;
}

export function notFound(ref: ResourceRef, name: string): StatusError {
  return new StatusError(404, "NotFound", `${qualifiedResource(ref)} "${name}" not found`, details(ref, name));
}

export function alreadyExists(ref: ResourceRef, name: string): StatusError {
  return new StatusError(409, "AlreadyExists", `${qualifiedResource(ref)} "${name}" already exists`, details(ref, name));
}

export function conflict(ref: ResourceRef, name: string): StatusError {
  return new StatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedResource(ref)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    details(ref, name),
  );
}

export function conflictMessage(ref: ResourceRef, name: string, message: string): StatusError {
  return new StatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedResource(ref)} "${name}": ${message}`,
    details(ref, name),
  );
}

export function expired(message: string): StatusError {
  return new StatusError(410, "Expired", message);
}

/** Wraps a Status body built elsewhere (the schema and Pod Security helpers build their own). */
export function fromBody(body: { code: number; reason: string; message: string; details?: StatusDetails }): StatusError {
  return new StatusError(body.code, body.reason, body.message, body.details);
}

/** 403 as admission plugins produce it: `pods "x" is forbidden: <why>`. */
export function forbidden(ref: ResourceRef, name: string, why: string): StatusError {
  return new StatusError(403, "Forbidden", `${qualifiedResource(ref)} "${name}" is forbidden: ${why}`, details(ref, name));
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, "BadRequest", message);
}

export function methodNotSupported(ref: ResourceRef, action: string): StatusError {
  return new StatusError(
    405,
    "MethodNotAllowed",
    `${action} is not supported on resources of kind "${qualifiedResource(ref)}"`,
    details(ref, undefined),
  );
}

export function unsupportedMediaType(contentType: string, accepted: string[]): StatusError {
  return new StatusError(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`, {
    causes: [{ reason: "UnsupportedMediaType", message: contentType }],
  });
}

export function pathNotFound(): StatusError {
  return new StatusError(404, "NotFound", "the server could not find the requested resource", {});
}

export function internalError(message: string): StatusError {
  return new StatusError(500, "InternalError", `Internal error occurred: ${message}`, {
    causes: [{ reason: "", message }],
  });
}

/** Faults injected by tests: the reason matches what the apiserver sends with that code. */
export function injected(code: number, message: string): StatusError {
  const reasons: Record<number, string> = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
  };
  const headers: Record<string, string> = code === 429 ? { "retry-after": "1" } : {};
  const d: StatusDetails | undefined = code === 429 ? { retryAfterSeconds: 1 } : undefined;
  return new StatusError(code, reasons[code] ?? "Unknown", message, d, headers);
}
