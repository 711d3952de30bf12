/**
 * Request validation with the reference's framework-level error shapes (docs/api.md "Error bodies"):
 * clients and their tests key on these status codes and bodies, so they are reproduced as
 * the Fastify/Ajv defaults produce them: first error only, `body/<json pointer> <text>`.
 */
import * as v from "valibot";
import type { FrameworkErrorBodySchema } from "./responses.ts";

export type FrameworkErrorBody = v.InferOutput<typeof FrameworkErrorBodySchema>;

export type BodyParse<T> = { ok: true; value: T } | { ok: false; body: FrameworkErrorBody };

/** Every `/v1` body is a JSON object; valibot would let an array through to its key checks. */
export function parseBody<S extends v.GenericSchema>(schema: S, input: unknown): BodyParse<v.InferOutput<S>> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false, body: validationFailure("body must be object") };
  }
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return { ok: true, value: result.output };
  return { ok: false, body: validationFailure(describeIssue(result.issues[0])) };
}

export function validationFailure(message: string): FrameworkErrorBody {
  return { statusCode: 400, code: "FST_ERR_VALIDATION", error: "Bad Request", message };
}

export const BODY_LIMIT_BYTES = 1_048_576;

export const bodyTooLarge: FrameworkErrorBody = {
  statusCode: 413,
  code: "FST_ERR_CTP_BODY_TOO_LARGE",
  error: "Payload Too Large",
  message: "Request body is too large",
};

export const invalidJsonBody: FrameworkErrorBody = {
  statusCode: 400,
  code: "FST_ERR_CTP_INVALID_JSON_BODY",
  error: "Bad Request",
  message: "Body is not valid JSON but content-type is set to 'application/json'",
};

export const emptyJsonBody: FrameworkErrorBody = {
  statusCode: 400,
  code: "FST_ERR_CTP_EMPTY_JSON_BODY",
  error: "Bad Request",
  message: "Body cannot be empty when content-type is set to 'application/json'",
};

export function unsupportedMediaType(contentType: string): FrameworkErrorBody {
  return {
    statusCode: 415,
    code: "FST_ERR_CTP_INVALID_MEDIA_TYPE",
    error: "Unsupported Media Type",
    message: `Unsupported Media Type: ${contentType}`,
  };
}

export function routeNotFound(method: string, path: string): FrameworkErrorBody {
  return { statusCode: 404, error: "Not Found", message: `Route ${method}:${path} not found` };
}

export function internalError(message: string): FrameworkErrorBody {
  return { statusCode: 500, error: "Internal Server Error", message };
}

const TYPE_WORDS: Record<string, string> = {
  object: "object",
  loose_object: "object",
  record: "object",
  array: "array",
  string: "string",
  number: "number",
  boolean: "boolean",
};

function describeIssue(issue: v.BaseIssue<unknown>): string {
  const keys = (issue.path ?? []).map((item) => String(item.key));
  const pointer = (parts: string[]) => ["body", ...parts].join("/");
  if (issue.kind === "schema" && issue.type === "object" && issue.received === "undefined" && keys.length > 0) {
    return `${pointer(keys.slice(0, -1))} must have required property '${keys.at(-1)}'`;
  }
  if (issue.kind === "schema" && issue.type === "picklist") {
    return `${pointer(keys)} must be equal to one of the allowed values`;
  }
  if (issue.kind === "schema" && issue.type === "literal") {
    return `${pointer(keys)} must be equal to constant`;
  }
  const typeWord = issue.kind === "schema" ? TYPE_WORDS[issue.type] : undefined;
  if (typeWord) return `${pointer(keys)} must be ${typeWord}`;
  // Our own pipes carry Ajv's wording as their message ("must be <= 65535").
  return `${pointer(keys)} ${issue.message.startsWith("must ") ? issue.message : "is invalid"}`;
}
