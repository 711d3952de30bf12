// Stand-ins for an ingress controller and a Gateway API controller, so route health has
// something to read: an Ingress whose class exists gets a load-balancer address; an HTTPRoute
// whose parent Gateway exists is Accepted with refs resolved. `sim.k8s-runner.dev/route` on the
// route object scripts the other outcomes: `unclaimed` (no controller answers) or `rejected`.
import { ANNOTATION_PREFIX } from "./behaviour.ts";
import type { KubeObject } from "./object.ts";
import { timestamp } from "./object.ts";
import { lookupType } from "./resources.ts";
import type { Store } from "./store.ts";

const INGRESS = lookupType("networking.k8s.io", "v1", "ingresses")!;
const INGRESS_CLASS = lookupType("networking.k8s.io", "v1", "ingressclasses")!;
const GATEWAY = lookupType("gateway.networking.k8s.io", "v1", "gateways")!;
const ROUTE = lookupType("gateway.networking.k8s.io", "v1", "httproutes")!;
const CONTROLLER = "sim.k8s-runner.dev/gateway-controller";

function scripted(obj: KubeObject): string | undefined {
  return obj.metadata.annotations?.[`${ANNOTATION_PREFIX}route`];
}

function cond(type: string, ok: boolean, reason: string, message: string, generation: number | undefined) {
  return { type, status: ok ? "True" : "False", reason, message, observedGeneration: generation ?? 1, lastTransitionTime: timestamp() };
}

export class RoutingController {
  private readonly timers = new Set<NodeJS.Immediate>();

  constructor(private readonly store: Store) {
    store.on(INGRESS, (ev) => ev.type !== "DELETED" && this.later(() => this.ingress(ev.object)));
    store.on(GATEWAY, (ev) => ev.type !== "DELETED" && this.later(() => this.gateway(ev.object)));
    store.on(ROUTE, (ev) => ev.type !== "DELETED" && this.later(() => this.route(ev.object)));
  }

  stop(): void {
    for (const t of this.timers) clearImmediate(t);
  }

  private later(fn: () => void): void {
    const t = setImmediate(() => {
      this.timers.delete(t);
      fn();
    });
    this.timers.add(t);
  }

  private ingress(ing: KubeObject): void {
    if (scripted(ing) === "unclaimed" || (ing.status?.loadBalancer?.ingress ?? []).length > 0) return;
    const classes = this.store.list(INGRESS_CLASS);
    const className = ing.spec?.ingressClassName;
    const claimed = className
      ? classes.some((c) => c.metadata.name === className)
      : classes.some((c) => c.metadata.annotations?.["ingressclass.kubernetes.io/is-default-class"] === "true");
    if (!claimed) return;
    this.store.mutate(INGRESS, ing.metadata.namespace, ing.metadata.name, (d) => {
      d.status = { loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } };
    });
  }

  private gateway(gw: KubeObject): void {
    if (gw.status?.conditions?.length) return;
    this.store.mutate(GATEWAY, gw.metadata.namespace, gw.metadata.name, (d) => {
      d.status = {
        addresses: [{ type: "IPAddress", value: "127.0.0.1" }],
        conditions: [cond("Accepted", true, "Accepted", "", d.metadata.generation), cond("Programmed", true, "Programmed", "", d.metadata.generation)],
      };
    });
  }

  private route(route: KubeObject): void {
    const mode = scripted(route);
    if (mode === "unclaimed") return;
    const parents = (route.spec?.parentRefs ?? [])
      .filter((p: { name: string; namespace?: string }) => this.store.get(GATEWAY, p.namespace ?? route.metadata.namespace, p.name))
      .map((parentRef: Record<string, unknown>) => ({
        parentRef,
        controllerName: CONTROLLER,
        conditions:
          mode === "rejected"
            ? [cond("Accepted", false, "NotAllowedByListeners", "simulated rejection", route.metadata.generation), cond("ResolvedRefs", true, "ResolvedRefs", "", route.metadata.generation)]
            : [cond("Accepted", true, "Accepted", "", route.metadata.generation), cond("ResolvedRefs", true, "ResolvedRefs", "", route.metadata.generation)],
      }));
    if (parents.length === 0) return;
    const status = { parents };
    const same = JSON.stringify(route.status?.parents?.map((p: { parentRef: unknown; conditions: { type: string; status: string }[] }) => [p.parentRef, p.conditions.map((c) => c.status)])) ===
      JSON.stringify(parents.map((p: { parentRef: unknown; conditions: { type: string; status: string }[] }) => [p.parentRef, p.conditions.map((c) => c.status)]));
    if (same) return;
    this.store.mutate(ROUTE, route.metadata.namespace, route.metadata.name, (d) => {
      d.status = status;
    });
  }
}
