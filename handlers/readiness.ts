/**
 * Readiness, apart from liveness (docs/operating.md "Readiness and shutdown"): `/v1/health` says the api process answers, so a
 * restart would not help; `/v1/ready` says it can serve sessions, which needs the supervisor,
 * so a Service sends no traffic to a pod whose supervisor is down or still re-adopting.
 */
import type { SupervisorClient } from "../src/internal/client.ts";
import { routes } from "../src/contract/routes.ts";

export type Readiness = { ready: true } | { ready: false; error: "supervisor_unavailable"; message: string };

export async function supervisorReady(supervisor: SupervisorClient): Promise<Readiness> {
  try {
    await supervisor.call(routes.capabilities);
    return { ready: true };
  } catch {
    // unreachable, of another protocol version, or refusing: not ready either way
  }
  return { ready: false, error: "supervisor_unavailable", message: "the runner's supervisor process is not reachable" };
}
