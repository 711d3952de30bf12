/**
 * A watch session's endpoints (docs/kubernetes.md "Watch pods", "Services and routes"): the `running` status, the
 * publish of every routed port, and the port changes its kernels declare on reload.
 */
import type { DebugFrame, ResolvedApp } from "../../contract/wire.ts";
import type { BackendCallbacks, RunningStatus, StartSpec } from "../../sessions/backend-seam.ts";
import type { KubeContext } from "../context.ts";
import { apiReason } from "../status/api-error.ts";
import { agentEndpoint, type EndpointContext, sessionEndpoints } from "../status/endpoints.ts";
import { declaredPorts, endpointReport } from "./declared-ports.ts";
import { type AgentPort, type PortChange, planPortChange, routedPorts } from "./port-changes.ts";
import { publishRoutes } from "./publish.ts";
import type { WatchRuntime } from "./watch-runtime.ts";

export class WatchPorts {
  readonly #ctx: KubeContext;
  readonly #spec: StartSpec;
  readonly #callbacks: BackendCallbacks;
  /** The runtime a republish is still for: an old pod's changes are dropped. */
  readonly #isCurrent: (runtime: WatchRuntime) => boolean;
  /** Port changes republish one at a time, in the order the kernels declared them. */
  #republishing: Promise<void> = Promise.resolve();

  constructor(ctx: KubeContext, spec: StartSpec, callbacks: BackendCallbacks, isCurrent: (runtime: WatchRuntime) => boolean) {
    this.#ctx = ctx;
    this.#spec = spec;
    this.#callbacks = callbacks;
    this.#isCurrent = isCurrent;
  }

  #endpointContext(): EndpointContext {
    return { sessionId: this.#spec.sessionId, baseDomain: this.#ctx.config.routing.baseDomain, routed: this.#ctx.router !== undefined };
  }

  #agentPort(): AgentPort | undefined {
    const agent = this.#spec.agent;
    return agent?.port !== undefined ? { name: agent.name, port: agent.port } : undefined;
  }

  /** Every app's ports; the agent's endpoint separately, never among them. */
  runningStatus(apps: readonly ResolvedApp[]): RunningStatus {
    const context = this.#endpointContext();
    const agent = this.#agentPort();
    return {
      kind: "running",
      endpoints: sessionEndpoints(
        apps.flatMap((app) => app.ports),
        context,
      ),
      ...(agent && { agent: agentEndpoint(agent.port, context) }),
    };
  }

  /**
   * Publishing: the Service over every routed port (create-or-replace), then the routes, always (an
   * empty set drops stale ones), then route health for the new hosts. Rejects with the API error.
   */
  async publish(runtime: WatchRuntime, apps: readonly ResolvedApp[]): Promise<void> {
    if (!this.#ctx.router) return;
    runtime.routeHealth?.abort();
    const routeHealth = new AbortController();
    runtime.abort.signal.addEventListener("abort", () => routeHealth.abort(), { once: true });
    runtime.routeHealth = routeHealth;
    await publishRoutes(this.#ctx, {
      sessionId: this.#spec.sessionId,
      ports: routedPorts(apps, this.#agentPort()),
      owner: { name: runtime.pod.name, uid: runtime.podUid },
      replace: true,
      signal: routeHealth.signal,
      // The agent's port is nobody's app: its events carry no `app`.
      appOf: (port) => apps.find((app) => app.ports.some((mapping) => mapping.port === port && mapping.protocol === "tcp"))?.name,
      onRoute: (event) => this.#callbacks.emit(event),
    });
  }

  /** A port change on reload: diff, accept or reject, republish, report, then reach. */
  onFrame(runtime: WatchRuntime, apps: ResolvedApp[], appName: string, frame: DebugFrame): void {
    const declared = declaredPorts(frame);
    const app = apps.find((candidate) => candidate.name === appName);
    if (declared === undefined || !app || !this.#isCurrent(runtime)) return;
    const change = planPortChange({
      current: app.ports,
      declared,
      otherApps: apps.filter((other) => other !== app).flatMap((other) => other.ports),
      agent: this.#agentPort(),
    });
    if (!change) return;
    // The app's port list changes now, so a second declaration is diffed against this one.
    app.ports = change.ports;
    this.#republishing = this.#republishing.then(() => this.#republish(runtime, apps, appName, change));
  }

  async #republish(runtime: WatchRuntime, apps: readonly ResolvedApp[], appName: string, change: PortChange): Promise<void> {
    if (!this.#isCurrent(runtime)) return;
    try {
      await this.publish(runtime, apps);
    } catch (error) {
      if (!this.#isCurrent(runtime)) return;
      this.#ctx.log.warn("republishing a watch session's endpoints failed", { sessionId: this.#spec.sessionId, app: appName, error });
      const reason = apiReason(error);
      this.#callbacks.emit({ type: "endpoints", app: appName, rejected: change.added.map(({ port }) => ({ port, reason })) });
      return;
    }
    if (!this.#isCurrent(runtime)) return;
    this.#callbacks.emit({ type: "endpoints", app: appName, ...endpointReport(change, this.#endpointContext()) });
    runtime.followers.get(appName)?.watchPorts(change.added);
  }
}
