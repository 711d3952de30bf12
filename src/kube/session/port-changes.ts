/**
 * Which ports a watch session routes, and how an app's ports change when a reload declares a
 * different set (docs/kubernetes.md "Services and routes"). Ports are unique across the whole session, the
 * agent's included; a reload that would collide is rejected and reported, never dropped.
 */
import type { PortMapping, ResolvedApp } from "../../contract/wire.ts";

/** The co-resident agent as far as ports go: it listens on one tcp port when it declares one. */
export interface AgentPort {
  name: string;
  port: number;
}

const samePort = (a: PortMapping) => (b: PortMapping) => a.port === b.port && a.protocol === b.protocol;

/** Every app's ports, then the agent's tcp port: what the Service and routes publish. */
export function routedPorts(apps: readonly ResolvedApp[], agent: AgentPort | undefined): PortMapping[] {
  return [...apps.flatMap((app) => app.ports), ...(agent ? [{ port: agent.port, protocol: "tcp" as const }] : [])];
}

export interface PortChangeInput {
  /** The app's ports now. */
  current: readonly PortMapping[];
  /** The ports its kernel declares after the reload (`Kernel.PortsResolved`). */
  declared: readonly PortMapping[];
  /** The ports of every other app of the session. */
  otherApps: readonly PortMapping[];
  agent: AgentPort | undefined;
}

export interface PortChange {
  /** The app's new port list: kept ports (in declared order), then the accepted additions. */
  ports: PortMapping[];
  added: PortMapping[];
  removed: PortMapping[];
  rejected: Array<{ port: number; reason: string }>;
}

function rejection(mapping: PortMapping, input: PortChangeInput): string | undefined {
  if (input.agent && mapping.protocol === "tcp" && mapping.port === input.agent.port) {
    return `this session's co-resident agent '${input.agent.name}' listens on tcp port ${mapping.port}`;
  }
  if (input.otherApps.some(samePort(mapping))) {
    return `another app in this session already declares ${mapping.protocol} port ${mapping.port}`;
  }
  return undefined;
}

/** The change a reload makes to one app's ports; undefined when the declared set is the same. */
export function planPortChange(input: PortChangeInput): PortChange | undefined {
  const additions = input.declared.filter((mapping) => !input.current.some(samePort(mapping)));
  const removed = input.current.filter((mapping) => !input.declared.some(samePort(mapping)));
  if (additions.length === 0 && removed.length === 0) return undefined;
  const added: PortMapping[] = [];
  const rejected: PortChange["rejected"] = [];
  for (const mapping of additions) {
    const reason = rejection(mapping, input);
    if (reason === undefined) added.push(mapping);
    else rejected.push({ port: mapping.port, reason });
  }
  const kept = input.declared.filter((mapping) => input.current.some(samePort(mapping)));
  return { ports: [...kept, ...added], added, removed, rejected };
}
