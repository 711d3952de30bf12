/**
 * Permissions k8s/base grants that the real-cluster tier does not exercise, each with the
 * reason. Everything else k8s/base grants must be used by some call the tier's runner makes
 * (rbac-audit.test.ts); an entry the tier does use fails too, so the list stays true.
 */
import type { Grant } from "../deploy/rbac.ts";

const sessions = (apiGroup: string, resource: string, verb: string): Grant => ({ namespace: "telo-sessions", apiGroup, resource, verb });
const REPUBLISH =
  "only when a routed watch session re-publishes over an earlier pod's objects (an app-set change, a resume): the tier's watch sessions run without routing";
const GATEWAY = "the real cluster has no Gateway API CRDs, so the runner never routes with HTTPRoutes there";

export const GRANTS_THE_TIER_DOES_NOT_USE: { grant: Grant; why: string }[] = [
  { grant: sessions("", "services", "get"), why: REPUBLISH },
  { grant: sessions("", "services", "update"), why: REPUBLISH },
  { grant: sessions("networking.k8s.io", "ingresses", "update"), why: REPUBLISH },
  { grant: sessions("networking.k8s.io", "ingresses", "delete"), why: "only when a re-published session has no TCP port left, which the tier does not do" },
  ...["get", "list", "create", "update", "delete"].map((verb) => ({ grant: sessions("gateway.networking.k8s.io", "httproutes", verb), why: GATEWAY })),
  {
    grant: { apiGroup: "", resource: "namespaces", verb: "list" },
    why: "the probe lists namespaces only when the session namespace is missing, and a runner pointed at another namespace has no pod permissions there",
  },
];
