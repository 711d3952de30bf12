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

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const NAME_MSG = `must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`;
const PREFIX_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
const VALUE_MSG = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`;

/** Why a label key is invalid, as apimachinery's IsLabelKey words it (empty when it is valid). */
function labelKeyErrors(key: string): string[] {
  const parts = key.split("/");
  if (parts.length > 2) return [`a valid label key ${NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  const errors: string[] = [];
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === "") errors.push("prefix part must be non-empty");
    else {
      if (prefix.length > 253) errors.push("prefix part must be no more than 253 characters");
      if (!DNS1123_SUBDOMAIN.test(prefix)) errors.push(`prefix part ${PREFIX_MSG}`);
    }
  }
  if (name === "") errors.push("name part must be non-empty");
  else if (name.length > 63) errors.push("name part must be no more than 63 characters");
  if (!LABEL_NAME.test(name)) errors.push(`name part ${NAME_MSG}`);
  return errors;
}

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

/**
 * The apiserver parses a selector with no field path, so a bad key reads `<nil>: Invalid value`
 * and a bad value `[key]: Invalid value` (field.Error's rendering of that path).
 */
function checkKey(key: string): void {
  const errors = labelKeyErrors(key);
  if (errors.length > 0) throw badRequest(`unable to parse requirement: <nil>: Invalid value: ${JSON.stringify(key)}: ${errors.join("; ")}`);
}

function checkValue(key: string, value: string): void {
  const errors = [...(value.length > 63 ? ["must be no more than 63 characters"] : []), ...(LABEL_VALUE.test(value) ? [] : [VALUE_MSG])];
  if (errors.length > 0) throw badRequest(`unable to parse requirement: [${key}]: Invalid value: ${JSON.stringify(value)}: ${errors.join("; ")}`);
}

function parseLabelRequirement(raw: string): LabelRequirement {
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(raw);
  if (set) {
    const key = set[1]!;
    checkKey(key);
    const values = set[3]!.split(",").map((v) => v.trim());
    for (const v of values) checkValue(key, v);
    return { key, op: set[2] as "in" | "notin", values };
  }
  const eq = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(raw);
  if (eq) {
    const key = eq[1]!;
    checkKey(key);
    const value = eq[3]!.trim();
    checkValue(key, value);
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
