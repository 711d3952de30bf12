// Server-side field validation (`fieldValidation=Strict|Warn|Ignore`): fields the official types
// do not have are an error (Strict, what kubectl sends), a warning (Warn, the default), or
// silently dropped (Ignore) — and never stored, as the apiserver's typed decoding drops them.
// The field lists come from client-node's models, which are generated from the official OpenAPI.
import { attributes, modelName } from "./models.ts";
import type { KubeObject } from "./object.ts";
import { badRequest } from "./status.ts";

/** Collects (and removes) fields `value` has that `type` does not declare. */
function prune(value: unknown, type: string, path: string, unknown: string[]): void {
  if (value === null || typeof value !== "object") return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((v, i) => prune(v, array[1]!, `${path}[${i}]`, unknown));
    return;
  }
  const attrs = attributes(type);
  if (!attrs || Array.isArray(value)) return;
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const fieldType = attrs.get(key)?.type;
    const fieldPath = path ? `${path}.${key}` : key;
    if (fieldType === undefined) {
      unknown.push(fieldPath);
      delete obj[key];
    } else prune(obj[key], fieldType, fieldPath, unknown);
  }
}

/**
 * Applies the request's field validation to `obj` (in place). Returns warnings for Warn; throws
 * 400 for Strict. Kinds without a generated model (Gateway API) are left as they are.
 */
export function validateFields(obj: KubeObject, directive: string | null): string[] {
  const mode = directive ?? "Warn";
  if (mode !== "Strict" && mode !== "Warn" && mode !== "Ignore") {
    throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict" (got "${mode}")`);
  }
  const model = obj.apiVersion && obj.kind ? modelName(obj.apiVersion, obj.kind) : undefined;
  if (!model) return [];
  const unknown: string[] = [];
  prune(obj, model, "", unknown);
  if (unknown.length === 0 || mode === "Ignore") return [];
  const problems = unknown.map((f) => `unknown field ${JSON.stringify(f)}`);
  if (mode === "Strict") {
    throw badRequest(`${obj.kind} in version ${JSON.stringify(obj.apiVersion?.split("/").pop())} cannot be handled as a ${obj.kind}: strict decoding error: ${problems.join(", ")}`);
  }
  return problems;
}
