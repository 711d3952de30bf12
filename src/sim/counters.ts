// Request accounting for tests and benchmarks: counts by "verb resource[/subresource]" and the
// RBAC tuples every request is authorized against, so deployment tests can check calls against
// Role rules.
import { authorizedVerbs, type RequestInfo, type Verb } from "./request-info.ts";

export interface RecordedRequest {
  verb: Verb;
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

/** Bounded so a long benchmark cannot grow memory without limit; counters keep counting. */
const MAX_RECORDED = 100_000;

export class RequestCounters {
  private counts = new Map<string, number>();
  private recorded: RecordedRequest[] = [];

  record(info: RequestInfo): void {
    const key = `${info.verb} ${info.type.plural}${info.subresource ? `/${info.subresource}` : ""}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    // One tuple per authorization check: a WebSocket attach is checked as get and as create.
    for (const verb of authorizedVerbs(info)) {
      if (this.recorded.length >= MAX_RECORDED) return;
      const r: RecordedRequest = { verb, apiGroup: info.type.group, resource: info.type.plural };
      if (info.subresource) r.subresource = info.subresource;
      if (info.namespace) r.namespace = info.namespace;
      this.recorded.push(r);
    }
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  requests(): RecordedRequest[] {
    return [...this.recorded];
  }

  reset(): void {
    this.counts = new Map();
    this.recorded = [];
  }
}
