// Label and field selectors with the apiserver's grammar and its refusals (400 with the same
// wording), compiled once per request so matching an event against 2,000 watchers stays cheap.
import { badRequest } from "./status.ts";
import type { KubeObject } from "./object.ts";

export type Matcher = (obj: KubeObject) => boolean;

interface LabelRequirement {
  key: string;
  op: "=" | "!=" | "in" | "notin" | "exists" | "!";
  values: string[];
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Splits on commas that are not inside a `(...)` value set. */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function checkKey(key: string): void {
  if (!LABEL_KEY.test(key) || key.length > 317) {
    throw badRequest(`unable to parse requirement: invalid label key "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`);
  }
}

function checkValue(value: string): void {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    throw badRequest(`unable to parse requirement: invalid label value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`);
  }
}

function parseLabelRequirement(raw: string): LabelRequirement {
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(raw);
  if (set) {
    const key = set[1]!;
    checkKey(key);
    const values = set[3]!.split(",").map((v) => v.trim());
    values.forEach(checkValue);
    return { key, op: set[2] as "in" | "notin", values };
  }
  const eq = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(raw);
  if (eq) {
    const key = eq[1]!;
    checkKey(key);
    const value = eq[3]!.trim();
    checkValue(value);
    return { key, op: eq[2] === "!=" ? "!=" : "=", values: [value] };
  }
  if (raw.startsWith("!")) {
    const key = raw.slice(1).trim();
    checkKey(key);
    return { key, op: "!", values: [] };
  }
  checkKey(raw);
  return { key: raw, op: "exists", values: [] };
}

export function compileLabelSelector(selector: string | undefined): Matcher | undefined {
  if (!selector || selector.trim() === "") return undefined;
  const reqs = splitTopLevel(selector).map(parseLabelRequirement);
  return (obj) => {
    const labels = obj.metadata.labels ?? {};
    for (const r of reqs) {
      const has = Object.prototype.hasOwnProperty.call(labels, r.key);
      const v = labels[r.key];
      switch (r.op) {
        case "=":
          if (v !== r.values[0]) return false;
          break;
        case "!=":
          if (v === r.values[0]) return false;
          break;
        case "in":
          if (!has || !r.values.includes(v!)) return false;
          break;
        case "notin":
          if (has && r.values.includes(v!)) return false;
          break;
        case "exists":
          if (!has) return false;
          break;
        case "!":
          if (has) return false;
          break;
      }
    }
    return true;
  };
}

/** Field paths each kind supports in field selectors, as the apiserver registers them. */
const FIELD_GETTERS: Record<string, Record<string, (o: KubeObject) => unknown>> = {
  Pod: {
    "spec.nodeName": (o) => o.spec?.nodeName ?? "",
    "spec.restartPolicy": (o) => o.spec?.restartPolicy ?? "",
    "spec.schedulerName": (o) => o.spec?.schedulerName ?? "",
    "spec.serviceAccountName": (o) => o.spec?.serviceAccountName ?? "",
    "spec.hostNetwork": (o) => String(o.spec?.hostNetwork ?? false),
    "status.phase": (o) => o.status?.phase ?? "",
    "status.podIP": (o) => o.status?.podIP ?? "",
    "status.nominatedNodeName": (o) => o.status?.nominatedNodeName ?? "",
  },
  Event: {
    "involvedObject.kind": (o) => o.involvedObject?.kind ?? "",
    "involvedObject.namespace": (o) => o.involvedObject?.namespace ?? "",
    "involvedObject.name": (o) => o.involvedObject?.name ?? "",
    "involvedObject.uid": (o) => o.involvedObject?.uid ?? "",
    "involvedObject.apiVersion": (o) => o.involvedObject?.apiVersion ?? "",
    "involvedObject.resourceVersion": (o) => o.involvedObject?.resourceVersion ?? "",
    "involvedObject.fieldPath": (o) => o.involvedObject?.fieldPath ?? "",
    reason: (o) => o.reason ?? "",
    reportingComponent: (o) => o.reportingComponent ?? "",
    source: (o) => o.source?.component ?? "",
    type: (o) => o.type ?? "",
  },
  Secret: { type: (o) => o.type ?? "" },
  Namespace: { "status.phase": (o) => o.status?.phase ?? "" },
  Node: { "spec.unschedulable": (o) => String(o.spec?.unschedulable ?? false) },
  Job: { "status.successful": (o) => String(o.status?.succeeded ?? 0) },
};

export interface FieldSelector {
  matcher: Matcher;
  /** Set when the selector pins `metadata.name=<x>`: lets the watch hub index such watchers. */
  exactName?: string;
}

export function compileFieldSelector(kind: string, selector: string | undefined): FieldSelector | undefined {
  if (!selector || selector.trim() === "") return undefined;
  const getters = FIELD_GETTERS[kind] ?? {};
  let exactName: string | undefined;
  const tests: Matcher[] = [];
  for (const raw of splitTopLevel(selector)) {
    const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(raw);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${raw}'`);
    const field = m[1]!.trim();
    const negate = m[2] === "!=";
    const value = m[3]!.trim();
    let get: (o: KubeObject) => unknown;
    if (field === "metadata.name") {
      get = (o) => o.metadata.name;
      if (!negate) exactName = value;
    } else if (field === "metadata.namespace") {
      get = (o) => o.metadata.namespace ?? "";
    } else {
      const g = getters[field];
      if (!g) throw badRequest(`field label not supported: ${field}`);
      get = g;
    }
    tests.push(negate ? (o) => get(o) !== value : (o) => get(o) === value);
  }
  const result: FieldSelector = { matcher: (o) => tests.every((t) => t(o)) };
  if (exactName !== undefined) result.exactName = exactName;
  return result;
}
