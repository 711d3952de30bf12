// Keeps ResourceQuota status.used current: any change in a namespace schedules one recount.
import { refreshQuotaStatus } from "./quota.ts";
import { RESOURCE_TYPES } from "./resources.ts";
import type { Store } from "./store.ts";

export function startQuotaController(store: Store): () => void {
  const pending = new Set<string>();
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    scheduled = undefined;
    for (const ns of pending) refreshQuotaStatus(store, ns);
    pending.clear();
  };
  for (const type of RESOURCE_TYPES) {
    if (!type.namespaced) continue;
    store.on(type, (ev) => {
      // The controller's own status writes would otherwise schedule a recount of themselves.
      if (type.plural === "resourcequotas" && ev.type === "MODIFIED" && JSON.stringify(ev.old?.spec) === JSON.stringify(ev.object.spec)) return;
      const ns = ev.object.metadata.namespace!;
      pending.add(ns);
      scheduled ??= setImmediate(flush);
    });
  }
  return () => {
    if (scheduled) clearImmediate(scheduled);
  };
}
