/**
 * What a session sees of the routing layer chosen at boot (routing.ts builds it), apart from its
 * making so that the route-health follower can name it without importing the layers.
 */
import type { PortMapping, RouteState } from "../../contract/wire.ts";
import type { OwnerPod } from "../specs/owner.ts";

/** A routed tcp port and its public host. */
export interface PublishedHost {
  host: string;
  port: number;
}

export interface PublishInput {
  sessionId: string;
  /** Every routed port of the session; udp ports get no route. */
  ports: readonly PortMapping[];
  /** The session's current pod. */
  owner: OwnerPod;
}

/** Who hears route health besides the log. */
export interface RouteHealthReport {
  /** The first read error's line (run sessions write it to the terminal). */
  onReadError?: (line: string) => void;
  /** Every host's state: `pending` as it is published, then each change. */
  onState?: (host: PublishedHost, state: RouteState, reason?: string) => void;
}

export interface Router {
  layer: "ingress" | "gateway";
  /** Create-or-replace the session's routing objects for exactly `ports`; one host per tcp port, in order. */
  publish(input: PublishInput): Promise<PublishedHost[]>;
  /**
   * Polls until every host is settled, the route-ready deadline passes, or `signal` aborts, and
   * reports to the log and to `report`.
   */
  watchRouteHealth(sessionId: string, hosts: PublishedHost[], signal: AbortSignal, report?: RouteHealthReport): void;
}
