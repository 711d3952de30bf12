/**
 * The route table of the `/v1` contract: each route's method, path, request schema, response
 * schema and success status, written once. The api's handlers mount it, the supervisor's
 * internal server dispatches on it (the same paths under `/internal`), the typed client calls
 * through it and the OpenAPI document is generated from it, so none of them can disagree.
 */
import type * as v from "valibot";
import {
  AppSessionBodySchema,
  CreateSessionBodySchema,
  PoolClaimBodySchema,
  ProbeBodySchema,
  SetAppsBodySchema,
  WorkspaceChangeSetBodySchema,
} from "./requests.ts";
import {
  AppsChangedSchema,
  CapabilitiesSchema,
  HealthSchema,
  MetricsSnapshotSchema,
  PlacementSchema,
  OpenApiDocumentSchema,
  ReadySchema,
  ReloadedSchema,
  ResumedSchema,
  SessionListSchema,
} from "./responses.ts";
import {
  AvailabilityReportSchema,
  CreatedSessionSchema,
  SessionDocumentSchema,
  WorkspaceApplyResultSchema,
  WorkspaceFileSchema,
  WorkspaceTreeSchema,
} from "./wire.ts";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

/**
 * How a route is served. `api`: the api process answers itself. `relayed`: a JSON round trip
 * the supervisor answers under `/internal`. `events` / `terminal`: the SSE stream and the
 * WebSocket, piped from the supervisor. `internal`: served only on the internal socket.
 */
export type RouteKind = "api" | "relayed" | "events" | "terminal" | "internal";

/**
 * Who may call a route (README "Security"). `open`: no token, since liveness and readiness say
 * nothing about sessions. `stream`: the token may come as `?access_token=`, since browsers set no
 * headers on an EventSource or a WebSocket. `creates`: starts a session, so it counts against the
 * per-client creation limit. Absent: a bearer token in the `authorization` header.
 */
export type AccessClass = "open" | "stream" | "creates";

/** The header carrying the terms version a client accepted (README "Terms"). */
export const TERMS_HEADER = "x-telo-accepted-terms";

export type RouteSpec = {
  method: Method;
  /** Below `/v1` (and `/internal`); `:name` marks a path parameter. */
  path: string;
  kind: RouteKind;
  summary: string;
  /** The JSON body's schema; absent: the route reads no body. */
  body?: v.GenericSchema;
  /** The success answer's schema; absent: no body (204) or a stream. */
  response?: v.GenericSchema;
  status: 200 | 201 | 202 | 204;
  /** Query parameters passed through as they came. */
  query?: readonly string[];
  /** Forwards the terms header (`TERMS_HEADER`; docs/api.md "Terms"). */
  terms?: true;
  access?: AccessClass;
};

const route = <const R extends RouteSpec>(spec: R): R => spec;

export const routes = {
  health: route({ method: "GET", path: "/health", kind: "api", summary: "Liveness of the api process", response: HealthSchema, status: 200, access: "open" }),
  ready: route({
    method: "GET",
    path: "/ready",
    kind: "api",
    summary: "Readiness: the supervisor is reachable (503 while it is not)",
    response: ReadySchema,
    status: 200,
    access: "open",
  }),
  openApi: route({
    method: "GET",
    path: "/openapi.json",
    kind: "api",
    summary: "This document: the OpenAPI 3.1 description of /v1",
    response: OpenApiDocumentSchema,
    status: 200,
  }),
  capabilities: route({
    method: "GET",
    path: "/capabilities",
    kind: "relayed",
    summary: "What this runner offers",
    response: CapabilitiesSchema,
    status: 200,
  }),
  probe: route({
    method: "POST",
    path: "/probe",
    kind: "relayed",
    summary: "The backend's availability for a config",
    body: ProbeBodySchema,
    response: AvailabilityReportSchema,
    status: 200,
  }),
  createSession: route({
    method: "POST",
    path: "/sessions",
    kind: "relayed",
    summary: "Create a session from a bundle",
    body: CreateSessionBodySchema,
    response: CreatedSessionSchema,
    status: 201,
    terms: true,
    access: "creates",
  }),
  createAppSession: route({
    method: "POST",
    path: "/apps/:name/sessions",
    kind: "relayed",
    summary: "Create a session of a predefined app",
    body: AppSessionBodySchema,
    response: CreatedSessionSchema,
    status: 201,
    terms: true,
    access: "creates",
  }),
  getSession: route({
    method: "GET",
    path: "/sessions/:id",
    kind: "relayed",
    summary: "The session document",
    response: SessionDocumentSchema,
    status: 200,
  }),
  deleteSession: route({ method: "DELETE", path: "/sessions/:id", kind: "relayed", summary: "Stop a session", status: 204 }),
  sessionEvents: route({
    method: "GET",
    path: "/sessions/:id/events",
    kind: "events",
    access: "stream",
    summary: "The session's events (Server-Sent Events)",
    status: 200,
    query: ["lastEventId"],
  }),
  sessionIo: route({
    method: "GET",
    path: "/sessions/:id/io",
    kind: "terminal",
    access: "stream",
    summary: "The terminal (WebSocket)",
    status: 200,
    query: ["app", "lastSeq"],
  }),
  workspaceTree: route({
    method: "GET",
    path: "/sessions/:id/workspace",
    kind: "relayed",
    summary: "The live workspace's content-hash tree",
    response: WorkspaceTreeSchema,
    status: 200,
  }),
  workspaceApply: route({
    method: "POST",
    path: "/sessions/:id/workspace",
    kind: "relayed",
    summary: "Apply a change set to the live workspace",
    body: WorkspaceChangeSetBodySchema,
    response: WorkspaceApplyResultSchema,
    status: 200,
  }),
  workspaceFile: route({
    method: "GET",
    path: "/sessions/:id/workspace/file",
    kind: "relayed",
    summary: "One file of the live workspace",
    response: WorkspaceFileSchema,
    status: 200,
    query: ["path"],
  }),
  reload: route({
    method: "POST",
    path: "/sessions/:id/reload",
    kind: "relayed",
    summary: "Re-run the session's apps",
    response: ReloadedSchema,
    status: 202,
    query: ["app"],
  }),
  setApps: route({
    method: "PUT",
    path: "/sessions/:id/apps",
    kind: "relayed",
    summary: "Replace the app set",
    body: SetAppsBodySchema,
    response: AppsChangedSchema,
    status: 202,
  }),
  resume: route({
    method: "POST",
    path: "/sessions/:id/resume",
    kind: "relayed",
    summary: "Resume a suspended watch session",
    response: ResumedSchema,
    status: 202,
  }),
  // Served on the internal socket only.
  listSessions: route({
    method: "GET",
    path: "/sessions",
    kind: "internal",
    summary: "Every session the supervisor holds (the console's list)",
    response: SessionListSchema,
    status: 200,
  }),
  metrics: route({
    method: "GET",
    path: "/metrics",
    kind: "internal",
    summary: "The supervisor's figures, as prom-client JSON",
    response: MetricsSnapshotSchema,
    status: 200,
  }),
  placement: route({
    method: "GET",
    path: "/placement",
    kind: "internal",
    summary: "Which replica serves each shard's sessions (several replicas); with ?after=<version>, held until it is another",
    query: ["after"],
    response: PlacementSchema,
    status: 200,
  }),
  poolClaim: route({
    method: "POST",
    path: "/pool/:pod/claim",
    kind: "internal",
    summary: "A warm pool claim's answer, handed by the claiming replica to the pod's maker (several replicas)",
    body: PoolClaimBodySchema,
    status: 204,
  }),
  // The path keeps its first name: a replica of the release before, met during a rolling update,
  // answers it with the same look.
  shardsMoved: route({
    method: "POST",
    path: "/replicas/released",
    kind: "internal",
    summary: "Shards changed hands (another replica released them, or took them and serves them now): look again at once, not at the next period (several replicas)",
    status: 204,
  }),
} as const satisfies Record<string, RouteSpec>;

export type Routes = typeof routes;
export type RouteName = keyof Routes;
/** The JSON round trips the supervisor answers. */
export type RelayedRouteName = { [K in RouteName]: Routes[K]["kind"] extends "relayed" | "internal" ? K : never }[RouteName];

type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;
type QueryNames<R> = R extends { query: readonly (infer Q extends string)[] } ? Q : never;

export type RouteParams<R extends RouteSpec> = Record<ParamNames<R["path"]>, string>;
export type RouteBody<R extends RouteSpec> = R extends { body: infer S extends v.GenericSchema } ? v.InferOutput<S> : undefined;
/** What a client sends: the schema's input (defaults not yet filled). */
export type RouteBodyInput<R extends RouteSpec> = R extends { body: infer S extends v.GenericSchema } ? v.InferInput<S> : undefined;
export type RouteAnswer<R extends RouteSpec> = R extends { response: infer S extends v.GenericSchema } ? v.InferOutput<S> : void;

/** One call of a route as the supervisor receives it. */
export type RouteInput<R extends RouteSpec> = {
  params: RouteParams<R>;
  query: Partial<Record<QueryNames<R>, string>>;
  body: RouteBody<R>;
  acceptedTerms: string | undefined;
};

export const V1_PREFIX = "/v1";
export const INTERNAL_PREFIX = "/internal";

/** The parameter names of a path, in order. */
/**
 * The `/v1` paths of one access class's routes, matched at a request path's end (the routes may
 * be mounted under a prefix), whatever the method.
 */
export function accessPattern(access: AccessClass): RegExp {
  const specs: RouteSpec[] = Object.values(routes);
  const paths = specs
    .filter((spec) => spec.access === access)
    .map((spec) => `${V1_PREFIX}${spec.path}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:\w+/g, "[^/]+"));
  return new RegExp(`(?:${[...new Set(paths)].join("|")})$`);
}

export function paramNames(path: string): string[] {
  return path.split("/").filter((part) => part.startsWith(":")).map((part) => part.slice(1));
}

/** The concrete path of a route: each `:name` replaced by its encoded value. */
export function pathOf(prefix: string, spec: RouteSpec, params: Record<string, string>): string {
  const parts = spec.path.split("/").map((part) => (part.startsWith(":") ? encodeURIComponent(params[part.slice(1)] ?? "") : part));
  return prefix + parts.join("/");
}

/** The decoded parameters when `pathname` is this route's path under `prefix`, else undefined. */
export function matchPath(prefix: string, spec: RouteSpec, pathname: string): Record<string, string> | undefined {
  if (!pathname.startsWith(prefix)) return undefined;
  const want = spec.path.split("/");
  const got = pathname.slice(prefix.length).split("/");
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of want.entries()) {
    const actual = got[index]!;
    if (part.startsWith(":")) {
      if (actual === "") return undefined;
      params[part.slice(1)] = safeDecode(actual);
    } else if (part !== actual) {
      return undefined;
    }
  }
  return params;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The query string of a route's pass-through parameters (empty, or `?…`). */
export function queryOf(spec: RouteSpec, query: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const name of spec.query ?? []) {
    const value = query[name];
    if (value !== undefined) search.set(name, value);
  }
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}

/** The route of `kinds` that `method` and `pathname` (under `prefix`) name, with its parameters. */
export function findRoute(
  prefix: string,
  method: string,
  pathname: string,
  kinds: readonly RouteKind[],
): [RouteName, Record<string, string>] | undefined {
  for (const [name, spec] of Object.entries(routes) as [RouteName, RouteSpec][]) {
    if (spec.method !== method || !kinds.includes(spec.kind)) continue;
    const params = matchPath(prefix, spec, pathname);
    if (params) return [name, params];
  }
  return undefined;
}
