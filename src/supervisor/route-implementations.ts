/**
 * What the supervisor does for each relayed route of the table. The mapped type makes the
 * compiler hold every route to its table entry: each is implemented, takes the route's
 * parameters and validated body, and answers the route's response type.
 */
import type { RelayedRouteName, RouteAnswer, RouteInput, Routes } from "../contract/routes.ts";
import { Problem } from "../contract/problem.ts";
import { metricsSnapshot } from "../metrics/registry.ts";
import type { SessionService } from "./session-service.ts";

type Implementation<R extends Routes[RelayedRouteName]> = (input: RouteInput<R>) => Promise<RouteAnswer<R>> | RouteAnswer<R>;
export type Implementations = { [K in RelayedRouteName]: Implementation<Routes[K]> };

/** A route's input before the table tells its parameter and body types. */
export type RouteInputs = {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: unknown;
  acceptedTerms: string | undefined;
};

export function implementations(service: SessionService): Implementations {
  const { watch } = service;
  return {
    capabilities: () => service.capabilities(),
    probe: ({ body }) => service.probe(body.config),
    createSession: ({ body, acceptedTerms }) => service.create(body, acceptedTerms),
    createAppSession: ({ params, body, acceptedTerms }) => service.createFromCatalog(params.name, body, acceptedTerms),
    getSession: ({ params }) => service.document(params.id),
    deleteSession: ({ params }) => service.stop(params.id),
    workspaceTree: ({ params }) => watch.workspaceTree(params.id),
    workspaceApply: ({ params, body }) => watch.workspaceApply(params.id, body),
    workspaceFile: ({ params, query }) => watch.workspaceFile(params.id, query.path),
    reload: ({ params, query }) => watch.reload(params.id, query.app),
    setApps: ({ params, body }) => watch.setApps(params.id, body),
    resume: ({ params }) => watch.resume(params.id),
    listSessions: () => ({ sessions: service.registry.all().map((session) => service.document(session.id)) }),
    metrics: () => metricsSnapshot(),
    placement: ({ query }) => service.placement(query.after),
    shardsMoved: () => service.shardsMoved(),
    poolClaim: ({ params, body }) => {
      // The maker's side: the pod's poll gets the answer; a pod this replica holds no token for cannot.
      if (service.backend.receivePoolClaim?.(params.pod, body.answer) !== true) {
        throw new Problem("not_found", "unknown_pool_pod", `this replica holds no claim token for the pool pod '${params.pod}'`);
      }
    },
  };
}
