// The simulated apiserver's audit record of writes: one entry per create, update, patch, delete
// or deletecollection once it is answered, with the object it named, the client's User-Agent
// and the answer's status code: what a real apiserver's audit log (at Metadata level) says of
// the same request. Tests count from it which client's writes to which object were accepted.
import type { RequestInfo, Verb } from "./request-info.ts";

export interface AuditedWrite {
  verb: Verb;
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  userAgent: string;
  code: number;
  /** When the request was received (ms since the epoch). */
  at: number;
}

const WRITES = new Set<Verb>(["create", "update", "patch", "delete", "deletecollection"]);

/** Bounded so a long benchmark cannot grow memory without limit. */
const MAX_AUDITED = 100_000;

export class WriteAudit {
  private entries: AuditedWrite[] = [];

  /** Whether the request is one the audit records. */
  static audits(info: RequestInfo): boolean {
    return WRITES.has(info.verb);
  }

  record(info: RequestInfo, userAgent: string, code: number, at: number): void {
    if (this.entries.length >= MAX_AUDITED) return;
    const entry: AuditedWrite = { verb: info.verb, apiGroup: info.type.group, resource: info.type.plural, userAgent, code, at };
    if (info.subresource) entry.subresource = info.subresource;
    if (info.namespace) entry.namespace = info.namespace;
    if (info.name) entry.name = info.name;
    this.entries.push(entry);
  }

  writes(): AuditedWrite[] {
    return [...this.entries];
  }

  reset(): void {
    this.entries = [];
  }
}
