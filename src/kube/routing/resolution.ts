/**
 * Which routing layer carries session traffic, decided once at boot (docs/kubernetes.md "Services and routes") from
 * the configuration and what the cluster offers. Configured intent (a Gateway name, then an
 * IngressClass, then a default-marked class) outranks installed APIs; genuine ambiguity refuses
 * to boot rather than guess, and a failed IngressClass list is never read as "none exist".
 */
import type { V1APIGroup, V1IngressClass } from "@kubernetes/client-node";
import type { RoutingConfig } from "../../config/kube.ts";
import { GATEWAY_API_GROUP } from "../specs/http-route.ts";
import { apiReason } from "../status/api-error.ts";

const DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class";

/** What the boot-time probes found; both probes fail soft. */
export interface RoutingProbe {
  /** The discovery entry of `gateway.networking.k8s.io`; undefined when not served or discovery failed. */
  gatewayApiGroup: V1APIGroup | undefined;
  ingressClasses: { ok: true; items: V1IngressClass[] } | { ok: false; error: unknown };
}

export interface GatewayRef {
  name: string;
  namespace: string;
  sectionName?: string;
}

export type RoutingDecision =
  | { layer: "none"; reason: string }
  | { layer: "ingress"; baseDomain: string; ingressClass?: string; tlsSecret?: string }
  | { layer: "gateway"; baseDomain: string; version: string; gateway: GatewayRef }
  /** A configuration error: printed alone, exit 2. */
  | { refusal: string };

/** v1 if served, else v1beta1, else the group's preferred version; undefined when not served. */
export function gatewayApiVersion(group: V1APIGroup | undefined): string | undefined {
  if (!group) return undefined;
  const served = group.versions.map((entry) => entry.version);
  if (served.includes("v1")) return "v1";
  if (served.includes("v1beta1")) return "v1beta1";
  return group.preferredVersion?.version ?? served[0];
}

function isDefaultClass(ingressClass: V1IngressClass): boolean {
  return ingressClass.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true";
}

/** Steps 1–2 decide without asking the cluster; only otherwise does boot run the probes. */
export function routingNeedsProbe(config: RoutingConfig): boolean {
  return config.mode !== "none" && config.baseDomain !== undefined;
}

const refusals = {
  gatewayModeNotServed: `SESSION_ROUTING_MODE=gateway but the cluster does not serve '${GATEWAY_API_GROUP}'. Install the Gateway API CRDs, or set SESSION_ROUTING_MODE=ingress.`,
  gatewayNameNotServed: `SESSION_GATEWAY_NAME is set but the cluster does not serve '${GATEWAY_API_GROUP}'. Install the Gateway API CRDs, or unset SESSION_GATEWAY_NAME to route via Ingress.`,
  ambiguous: (classes: number) =>
    `SESSION_ROUTING_MODE=auto cannot choose: this cluster serves '${GATEWAY_API_GROUP}' AND has ${classes} IngressClass(es) with none marked default, and nothing says which should carry session traffic. Set SESSION_ROUTING_MODE=ingress (with SESSION_INGRESS_CLASS) or SESSION_ROUTING_MODE=gateway (with SESSION_GATEWAY_NAME).`,
  gatewayWithoutName: (sessionNamespace: string) =>
    `SESSION_ROUTING_MODE=auto resolved to Gateway API, but SESSION_GATEWAY_NAME is unset — a route has to name the Gateway it attaches to, and picking one of several would fail as silently as publishing none. Set SESSION_GATEWAY_NAME (and SESSION_GATEWAY_NAMESPACE when the Gateway is not in '${sessionNamespace}').`,
  listFailed: (err: unknown) =>
    `SESSION_ROUTING_BASE_DOMAIN is set but the routing layer could not be resolved: listing IngressClasses failed (${apiReason(err)}) and '${GATEWAY_API_GROUP}' is not served. Grant \`list\` on \`ingressclasses\`, or set SESSION_ROUTING_MODE explicitly.`,
  nothingUsable: `SESSION_ROUTING_BASE_DOMAIN is set but this cluster offers no usable routing layer: no IngressClass exists and '${GATEWAY_API_GROUP}' is not served. Install an Ingress controller or the Gateway API, or set SESSION_ROUTING_MODE=none to run logs-only.`,
  tlsUnderGateway:
    "SESSION_INGRESS_TLS_SECRET is set but session routing resolved to Gateway API. Under Gateway API the origin certificate belongs to the Gateway listener's own `tls.certificateRefs`, not to the per-session route, so this Secret would be silently ignored. Move the reference to the Gateway and unset this, or set SESSION_ROUTING_MODE=ingress.",
};

type Layer = { layer: "ingress" } | { layer: "gateway"; version: string } | { refusal: string };

function chooseLayer(config: RoutingConfig, probe: RoutingProbe): Layer {
  const version = gatewayApiVersion(probe.gatewayApiGroup);
  const classes = probe.ingressClasses;
  switch (config.mode) {
    case "ingress":
      return { layer: "ingress" };
    case "gateway":
      return version ? { layer: "gateway", version } : { refusal: refusals.gatewayModeNotServed };
    default: {
      if (config.gatewayName) return version ? { layer: "gateway", version } : { refusal: refusals.gatewayNameNotServed };
      if (config.ingressClass) return { layer: "ingress" };
      if (classes.ok && classes.items.some(isDefaultClass)) return { layer: "ingress" };
      const classCount = classes.ok ? classes.items.length : undefined;
      if (version && classCount !== undefined && classCount > 0) return { refusal: refusals.ambiguous(classCount) };
      if (version) return { refusal: refusals.gatewayWithoutName(config.sessionNamespace) };
      if (classCount !== undefined && classCount > 0) return { layer: "ingress" };
      return { refusal: classes.ok ? refusals.nothingUsable : refusals.listFailed(classes.error) };
    }
  }
}

/**
 * The routing decision. `probe` is needed only when `routingNeedsProbe(config)`; a refusal is a
 * configuration error (exit 2), `none` means logs-only (no Service, no routes, host-less
 * endpoints).
 */
export function resolveRouting(config: RoutingConfig, probe?: RoutingProbe): RoutingDecision {
  if (config.mode === "none") return { layer: "none", reason: "SESSION_ROUTING_MODE=none" };
  const baseDomain = config.baseDomain;
  if (baseDomain === undefined) {
    return { layer: "none", reason: "SESSION_ROUTING_BASE_DOMAIN is unset, so no session host can be constructed" };
  }
  if (!probe) throw new Error("resolveRouting needs the cluster probe when a base domain is set");
  const chosen = chooseLayer(config, probe);
  if ("refusal" in chosen) return chosen;
  if (chosen.layer === "ingress") {
    return {
      layer: "ingress",
      baseDomain,
      ...(config.ingressClass && { ingressClass: config.ingressClass }),
      ...(config.tlsSecret && { tlsSecret: config.tlsSecret }),
    };
  }
  // A TLS secret would be silently ignored by HTTPRoutes: refuse rather than downgrade to plaintext.
  if (config.tlsSecret) return { refusal: refusals.tlsUnderGateway };
  if (!config.gatewayName) return { refusal: refusals.gatewayWithoutName(config.sessionNamespace) };
  return {
    layer: "gateway",
    baseDomain,
    version: chosen.version,
    gateway: {
      name: config.gatewayName,
      namespace: config.gatewayNamespace,
      ...(config.gatewaySectionName && { sectionName: config.gatewaySectionName }),
    },
  };
}

/** The boot log line of a decision (docs/kubernetes.md "Services and routes"); refusals are printed by the config-error path instead. */
export function routingLogEntry(decision: Exclude<RoutingDecision, { refusal: string }>): {
  level: "warn" | "info";
  message: string;
  fields: Record<string, string>;
} {
  switch (decision.layer) {
    case "none":
      return { level: "warn", message: "session routing disabled (logs-only)", fields: { reason: decision.reason } };
    case "ingress":
      return {
        level: "info",
        message: "session routing resolved",
        fields: { layer: "ingress", ingressClass: decision.ingressClass ?? "(cluster default)", baseDomain: decision.baseDomain },
      };
    case "gateway":
      return {
        level: "info",
        message: "session routing resolved",
        fields: {
          layer: "gateway",
          apiVersion: `${GATEWAY_API_GROUP}/${decision.version}`,
          gateway: `${decision.gateway.namespace}/${decision.gateway.name}`,
          baseDomain: decision.baseDomain,
        },
      };
  }
}
