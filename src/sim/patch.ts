// PATCH bodies: JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and strategic merge patch
// (merge patch whose object lists merge by their `name` key, as the built-in types declare).
import { badRequest, unsupportedMediaType, StatusError } from "./status.ts";

// Patches apply to arbitrary JSON documents.
type Json = any;

function isObject(v: Json): v is Record<string, Json> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function mergePatch(target: Json, patch: Json, strategic: boolean): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (strategic && k.startsWith("$")) continue;
    if (v === null) delete out[k];
    else if (strategic && Array.isArray(v) && Array.isArray(out[k]) && v.every((e) => isObject(e) && typeof e.name === "string")) {
      out[k] = mergeNamedList(out[k], v);
    } else out[k] = mergePatch(out[k], v, strategic);
  }
  return out;
}

function mergeNamedList(target: Json[], patch: Json[]): Json[] {
  const out = target.map((e) => structuredClone(e));
  for (const p of patch) {
    if (p.$patch === "delete") {
      const i = out.findIndex((e) => isObject(e) && e.name === p.name);
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    const i = out.findIndex((e) => isObject(e) && e.name === p.name);
    if (i >= 0) out[i] = mergePatch(out[i], p, true);
    else out.push(mergePatch({}, p, true));
  }
  return out;
}

function decodePointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw badRequest(`the server rejected our request due to an error in our request`);
  return path.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function parentOf(doc: Json, tokens: string[]): { parent: Json; key: string } {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(t)] : cur?.[t];
    if (cur === undefined || cur === null) throw new StatusError(422, "Invalid", `the server rejected our request due to an error in our request`);
  }
  return { parent: cur, key: tokens[tokens.length - 1]! };
}

function jsonPatch(doc: Json, ops: Json[]): Json {
  let out = structuredClone(doc);
  if (!Array.isArray(ops)) throw badRequest("json patch must be an array of operations");
  for (const op of ops) {
    const tokens = decodePointer(op.path);
    const get = (t: string[]): Json => t.reduce((c, k) => (Array.isArray(c) ? c[Number(k)] : c?.[k]), out);
    switch (op.op) {
      case "test":
        if (JSON.stringify(get(tokens)) !== JSON.stringify(op.value)) throw new StatusError(422, "Invalid", `the server rejected our request due to an error in our request`);
        break;
      case "remove": {
        const { parent, key } = parentOf(out, tokens);
        if (Array.isArray(parent)) parent.splice(Number(key), 1);
        else if (parent && key in parent) delete parent[key];
        else throw new StatusError(422, "Invalid", `the server rejected our request due to an error in our request`);
        break;
      }
      case "add":
      case "replace": {
        if (tokens.length === 0) {
          out = structuredClone(op.value);
          break;
        }
        const { parent, key } = parentOf(out, tokens);
        if (Array.isArray(parent)) {
          const idx = key === "-" ? parent.length : Number(key);
          if (op.op === "add") parent.splice(idx, 0, structuredClone(op.value));
          else parent[idx] = structuredClone(op.value);
        } else parent[key] = structuredClone(op.value);
        break;
      }
      case "move":
      case "copy": {
        const from = decodePointer(op.from);
        const value = structuredClone(get(from));
        if (op.op === "move") {
          const { parent, key } = parentOf(out, from);
          if (Array.isArray(parent)) parent.splice(Number(key), 1);
          else delete parent[key];
        }
        const { parent, key } = parentOf(out, tokens);
        if (Array.isArray(parent)) parent.splice(key === "-" ? parent.length : Number(key), 0, value);
        else parent[key] = value;
        break;
      }
      default:
        throw badRequest(`Unexpected kind: ${op.op}`);
    }
  }
  return out;
}

export function applyPatch(contentType: string, current: Json, body: string): Json {
  const type = contentType.split(";")[0]!.trim();
  let patch: Json;
  try {
    patch = JSON.parse(body);
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
  switch (type) {
    case "application/json-patch+json":
      return jsonPatch(current, patch);
    case "application/merge-patch+json":
      return mergePatch(current, patch, false);
    case "application/strategic-merge-patch+json":
      return mergePatch(current, patch, true);
    default:
      throw unsupportedMediaType(type, ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"]);
  }
}
