/**
 * Response bodies of the `/v1` routes that wire.ts does not already describe. With wire.ts
 * they are the answers' one description: the route table names them, the supervisor's and
 * the client's types are inferred from them, and the OpenAPI document is generated from them.
 */
import * as v from "valibot";
import { IoModeSchema, SessionDocumentSchema, TermsSchema } from "./wire.ts";

export const HealthSchema = v.object({ ok: v.literal(true), version: v.string() });
export type Health = v.InferOutput<typeof HealthSchema>;

/** Readiness: the supervisor answers (its 503 is an error answer with `ready: false`). */
export const ReadySchema = v.object({ ready: v.literal(true) });

/** A JSON Schema document (docs/api.md "Capabilities"); its content is the backend's business. */
const JsonSchemaDocumentSchema = v.record(v.string(), v.unknown());

export const CapabilitiesSchema = v.object({
  displayName: v.string(),
  description: v.string(),
  config: v.object({ schema: JsonSchemaDocumentSchema, supersededByTelo: v.optional(v.array(v.string())) }),
  features: v.object({
    io: v.array(IoModeSchema),
    ports: v.boolean(),
    watch: v.boolean(),
    agents: v.optional(v.array(v.string())),
    teloVersions: v.optional(v.boolean()),
  }),
  terms: v.optional(TermsSchema),
  apps: v.optional(
    v.array(v.object({ name: v.string(), title: v.optional(v.string()), description: v.optional(v.string()) })),
  ),
});
export type Capabilities = v.InferOutput<typeof CapabilitiesSchema>;

export const ReloadedSchema = v.object({ reloaded: v.array(v.string()) });
export type Reloaded = v.InferOutput<typeof ReloadedSchema>;

export const AppsChangedSchema = v.object({ apps: v.array(v.string()) });
export type AppsChanged = v.InferOutput<typeof AppsChangedSchema>;

export const ResumedSchema = v.object({ sessionId: v.string() });
export type Resumed = v.InferOutput<typeof ResumedSchema>;

/** The OpenAPI document of `/v1` (src/contract/openapi.ts): described by its own standard. */
export const OpenApiDocumentSchema = v.looseObject({ openapi: v.string(), info: v.looseObject({}), paths: v.record(v.string(), v.unknown()) });

/** The framework-level answers (docs/api.md "Error bodies"): validation, body size, media type, 404, 500. */
export const FrameworkErrorBodySchema = v.object({
  statusCode: v.number(),
  code: v.optional(v.string()),
  error: v.string(),
  message: v.string(),
});

/** The supervisor's figures as prom-client JSON, as much of it as an exposition needs (internal). */
export const MetricsSnapshotSchema = v.array(
  v.object({
    name: v.string(),
    help: v.string(),
    type: v.picklist(["counter", "gauge", "histogram", "summary"]),
    values: v.array(
      v.object({
        // JSON carries NaN (a figure with no value yet) as null.
        value: v.pipe(v.unknown(), v.transform((value) => (typeof value === "number" ? value : Number.NaN))),
        labels: v.record(v.string(), v.union([v.string(), v.number()])),
        metricName: v.optional(v.string()),
      }),
    ),
  }),
);

/** Every session the supervisor holds (internal: the console's list; /v1 has no list route). */
export const SessionListSchema = v.object({ sessions: v.array(SessionDocumentSchema) });
export type SessionList = v.InferOutput<typeof SessionListSchema>;

/**
 * Where each shard's sessions are served (internal: the api forwards by it, docs/replicas.md):
 * a single replica says so; a replica lists the peer address of each shard's holder, null
 * while nobody holds it.
 */
export const PlacementSchema = v.union([
  v.object({ shared: v.literal(false) }),
  v.object({
    shared: v.literal(true),
    identity: v.string(),
    peerAddress: v.string(),
    /** The replicas' peer credential (the internal socket is the pod's own, mode 0600). */
    credential: v.string(),
    /** Grows with each change: the api asks with the one it knows and is answered when it moves. */
    version: v.number(),
    owners: v.array(v.nullable(v.string())),
  }),
]);
export type PlacementAnswer = v.InferOutput<typeof PlacementSchema>;
