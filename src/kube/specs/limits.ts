/**
 * Resource ceilings (docs/kubernetes.md "Run pods"): requests can only lower them, never raise them,
 * and requests equal limits for cpu and memory so a session gets exactly what quota reserves.
 */
import type { V1ResourceRequirements } from "@kubernetes/client-node";
import type { Ceilings } from "../../config/kube.ts";

export type { Ceilings };

/** The n-th decimal suffix is 1000^n and the n-th binary one 1024^n; `K` is accepted for `k`. */
const DECIMAL_SUFFIXES = ["k", "M", "G", "T", "P", "E"];
const BINARY_SUFFIXES = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

const BYTE_SUFFIXES = new Map<string, number>([
  ["", 1],
  ["K", 1e3],
  ...DECIMAL_SUFFIXES.map((suffix, index): [string, number] => [suffix, 1000 ** (index + 1)]),
  ...BINARY_SUFFIXES.map((suffix, index): [string, number] => [suffix, 1024 ** (index + 1)]),
]);

const QUANTITY = /^(\d+(?:\.\d*)?|\.\d+)([a-zA-Z]*)$/;

/** `"500m"` → 500, `"1"` → 1000, `"0.5"` → 500; undefined when not a CPU quantity. */
export function cpuMillicores(quantity: string): number | undefined {
  const match = QUANTITY.exec(quantity.trim());
  if (!match) return undefined;
  const [, number, suffix] = match as unknown as [string, string, string];
  if (suffix === "m") return Number(number);
  if (suffix === "") return Number(number) * 1000;
  return undefined;
}

/** Memory and storage in bytes (binary Ki…Ei, decimal k/K…E); undefined when not a quantity. */
export function quantityBytes(quantity: string): number | undefined {
  const match = QUANTITY.exec(quantity.trim());
  if (!match) return undefined;
  const [, number, suffix] = match as unknown as [string, string, string];
  const multiplier = BYTE_SUFFIXES.get(suffix);
  return multiplier === undefined ? undefined : Number(number) * multiplier;
}

function clampQuantity(ceiling: string, requested: string | undefined, measure: (q: string) => number | undefined) {
  if (requested === undefined) return ceiling;
  const wanted = measure(requested);
  const allowed = measure(ceiling);
  if (wanted === undefined || allowed === undefined || wanted > allowed) return ceiling;
  return requested;
}

/**
 * `min(requested, ceiling)` per field. An unparseable request, or one above the ceiling, yields
 * the ceiling; a TTL is used only when positive and within the ceiling. The /v1 contract carries
 * no per-request limits today, so callers pass the ceilings alone.
 */
export function clampLimits(ceiling: Ceilings, requested: Partial<Ceilings> = {}): Ceilings {
  const ttl = requested.ttlSeconds;
  return {
    cpu: clampQuantity(ceiling.cpu, requested.cpu, cpuMillicores),
    memory: clampQuantity(ceiling.memory, requested.memory, quantityBytes),
    ephemeralStorage: clampQuantity(ceiling.ephemeralStorage, requested.ephemeralStorage, quantityBytes),
    ttlSeconds: ttl !== undefined && ttl > 0 && ttl <= ceiling.ttlSeconds ? ttl : ceiling.ttlSeconds,
  };
}

/** A session container's resources: limits on all three, requests equal to the cpu/memory limits. */
export function containerResources(limits: Ceilings): V1ResourceRequirements {
  return {
    limits: { cpu: limits.cpu, memory: limits.memory, "ephemeral-storage": limits.ephemeralStorage },
    requests: { cpu: limits.cpu, memory: limits.memory },
  };
}

/**
 * Fetch-and-unpack init containers (body-fetch, context-fetch). The namespace ResourceQuota
 * requires requests and limits on every container, init containers included (the reference set
 * none); wget + tar of a ≤1 MiB bundle needs little, and init containers run before the main
 * container, so this does not add to the pod's effective request.
 */
export const FETCH_INIT_CONTAINER_RESOURCES: V1ResourceRequirements = {
  limits: { cpu: "50m", memory: "64Mi" },
  requests: { cpu: "50m", memory: "64Mi" },
};
