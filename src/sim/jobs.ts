// The Job controller (batch/v1, NonIndexed): runs pods from the template until `completions`
// succeed or more than `backoffLimit` fail, honours activeDeadlineSeconds, suspend and
// ttlSecondsAfterFinished, and reports status and conditions as the real controller does.
import { admitNew } from "./admission.ts";
import { applyCreateDefaults } from "./defaults.ts";
import { deleteObject } from "./deletion.ts";
import type { EventRecorder } from "./events.ts";
import { type KubeObject, clone, newUid, randomSuffix, timestamp } from "./object.ts";
import { lookupType } from "./resources.ts";
import { StatusError } from "./status.ts";
import type { Store } from "./store.ts";

const JOB = lookupType("batch", "v1", "jobs")!;
const POD = lookupType("", "v1", "pods")!;
const NAMESPACE = lookupType("", "v1", "namespaces")!;
const CREATE_RETRY_MS = 1000;

interface Tracking {
  succeeded: Set<string>;
  failed: Set<string>;
  /** After a refused pod create the controller waits before trying again, as its rate limiter does. */
  retryAt?: number;
  retry?: NodeJS.Timeout;
  deadline?: NodeJS.Timeout;
  ttl?: NodeJS.Timeout;
}

function condition(type: string, reason: string, message: string) {
  const now = timestamp();
  return { type, status: "True", reason, message, lastProbeTime: now, lastTransitionTime: now };
}

function finished(job: KubeObject): boolean {
  return (job.status?.conditions ?? []).some((c: { type: string; status: string }) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");
}

export class JobController {
  private readonly tracking = new Map<string, Tracking>();
  private readonly queued = new Map<string, { namespace: string; name: string }>();
  private scheduled?: NodeJS.Immediate;

  constructor(
    private readonly store: Store,
    private readonly events: EventRecorder,
  ) {
    store.on(JOB, (ev) => {
      const job = ev.object;
      if (ev.type === "DELETED") {
        const t = this.tracking.get(job.metadata.uid!);
        clearTimeout(t?.deadline);
        clearTimeout(t?.ttl);
        clearTimeout(t?.retry);
        this.tracking.delete(job.metadata.uid!);
        return;
      }
      this.enqueue(job.metadata.namespace!, job.metadata.name);
    });
    store.on(POD, (ev) => {
      const owner = ev.object.metadata.ownerReferences?.find((o) => o.controller && o.kind === "Job");
      if (owner) this.enqueue(ev.object.metadata.namespace!, owner.name);
    });
  }

  stop(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    for (const t of this.tracking.values()) {
      clearTimeout(t.deadline);
      clearTimeout(t.ttl);
      clearTimeout(t.retry);
    }
  }

  private enqueue(namespace: string, name: string): void {
    this.queued.set(`${namespace}/${name}`, { namespace, name });
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      const work = [...this.queued.values()];
      this.queued.clear();
      for (const w of work) this.reconcile(w.namespace, w.name);
    });
  }

  private podsOf(job: KubeObject): KubeObject[] {
    return this.store.list(POD, job.metadata.namespace).filter((p) => p.metadata.ownerReferences?.some((o) => o.uid === job.metadata.uid));
  }

  private reconcile(namespace: string, name: string): void {
    const job = this.store.get(JOB, namespace, name);
    if (!job || job.metadata.deletionTimestamp) return;
    const uid = job.metadata.uid!;
    let t = this.tracking.get(uid);
    if (!t) this.tracking.set(uid, (t = { succeeded: new Set(), failed: new Set() }));
    const spec = job.spec;
    const pods = this.podsOf(job);
    for (const p of pods) {
      if (p.status?.phase === "Succeeded") t.succeeded.add(p.metadata.uid!);
      if (p.status?.phase === "Failed") t.failed.add(p.metadata.uid!);
    }
    const active = pods.filter((p) => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed" && !p.metadata.deletionTimestamp);
    const terminating = pods.filter((p) => p.metadata.deletionTimestamp && p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed").length;
    const ready = active.filter((p) => (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True")).length;

    const status = clone(job.status ?? {});
    const done = finished(job);
    if (!done && !spec.suspend) status.startTime ??= timestamp();
    let conditions: unknown[] = status.conditions ?? [];
    if (!done) {
      if (t.succeeded.size >= spec.completions) {
        const msg = "Reached expected number of succeeded pods";
        conditions = [...conditions, condition("SuccessCriteriaMet", "CompletionsReached", msg), condition("Complete", "CompletionsReached", msg)];
        status.completionTime = timestamp();
      } else if (t.failed.size > spec.backoffLimit) {
        this.fail(job, active, "BackoffLimitExceeded", "Job has reached the specified backoff limit");
        return;
      } else if (!spec.suspend && active.length + terminating < spec.parallelism && Date.now() >= (t.retryAt ?? 0)) {
        if (!this.createPod(job)) {
          t.retryAt = Date.now() + CREATE_RETRY_MS;
          clearTimeout(t.retry);
          t.retry = setTimeout(() => this.enqueue(namespace, name), CREATE_RETRY_MS);
        }
      }
      if (spec.activeDeadlineSeconds && status.startTime && !t.deadline) {
        const due = Date.parse(status.startTime) + spec.activeDeadlineSeconds * 1000;
        t.deadline = setTimeout(() => {
          const cur = this.store.get(JOB, namespace, name);
          if (cur && !finished(cur)) this.fail(cur, this.podsOf(cur).filter((p) => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed"), "DeadlineExceeded", "Job was active longer than specified deadline");
        }, Math.max(0, due - Date.now()));
      }
    }
    status.active = active.length;
    status.ready = ready;
    status.terminating = terminating;
    status.succeeded = t.succeeded.size;
    status.failed = t.failed.size;
    status.uncountedTerminatedPods = {};
    if (conditions.length > 0) status.conditions = conditions;
    for (const k of ["active", "succeeded", "failed"]) if (status[k] === 0) delete status[k];
    this.writeStatus(job, status);
  }

  private writeStatus(job: KubeObject, status: Record<string, unknown>): void {
    if (JSON.stringify(status) === JSON.stringify(job.status)) return;
    const after = this.store.mutate(JOB, job.metadata.namespace, job.metadata.name, (d) => {
      d.status = status;
    });
    if (after && finished(after)) this.scheduleTtl(after);
  }

  private fail(job: KubeObject, active: KubeObject[], reason: string, message: string): void {
    for (const p of active) {
      try {
        deleteObject(this.store, POD, p.metadata.namespace, p.metadata.name, {});
      } catch {
        // already gone
      }
    }
    const t = this.tracking.get(job.metadata.uid!);
    const status = clone(job.status ?? {});
    status.conditions = [...(status.conditions ?? []), condition("FailureTarget", reason, message), condition("Failed", reason, message)];
    status.failed = Math.max(t?.failed.size ?? 0, 1);
    delete status.active;
    status.ready = 0;
    this.writeStatus(job, status);
  }

  private scheduleTtl(job: KubeObject): void {
    const ttl = job.spec?.ttlSecondsAfterFinished;
    const t = this.tracking.get(job.metadata.uid!);
    if (ttl === undefined || !t || t.ttl) return;
    t.ttl = setTimeout(() => {
      try {
        deleteObject(this.store, JOB, job.metadata.namespace, job.metadata.name, { propagationPolicy: "Background" });
      } catch {
        // already gone
      }
    }, ttl * 1000);
  }

  /** Creates one pod from the template; false when admission refused it (recorded as an Event). */
  private createPod(job: KubeObject): boolean {
    const template = job.spec.template ?? {};
    const name = job.metadata.name;
    const pod: KubeObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        ...clone(template.metadata ?? {}),
        name: `${name}-${randomSuffix()}`,
        generateName: `${name}-`,
        namespace: job.metadata.namespace!,
        uid: newUid(),
        creationTimestamp: timestamp(),
        ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name, uid: job.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: clone(template.spec ?? {}),
    };
    applyCreateDefaults(pod);
    try {
      admitNew(this.store, POD, NAMESPACE, pod);
      this.store.write(POD, pod, "ADDED");
      return true;
    } catch (err) {
      const message = err instanceof StatusError ? err.message : String(err);
      this.events.record(
        { apiVersion: "batch/v1", kind: "Job", name: job.metadata.name, namespace: job.metadata.namespace!, uid: job.metadata.uid! },
        "Warning",
        "FailedCreate",
        `Error creating: ${message}`,
        "job-controller",
      );
      return false;
    }
  }
}
