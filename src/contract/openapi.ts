/**
 * The OpenAPI 3.1 document of `/v1`, generated from the route table and its valibot schemas
 * (through @valibot/to-json-schema), so it cannot drift from what the handlers validate and
 * answer. Request bodies are described by what the schemas accept (their input type), answers
 * by what they produce (their output type).
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { ErrorBodySchema, RunEventSchema, TeloVersionUnavailableSchema, TermsSchema } from "./wire.ts";
import { FrameworkErrorBodySchema } from "./responses.ts";
import { type RouteSpec, TERMS_HEADER, V1_PREFIX, paramNames, routes } from "./routes.ts";

type JsonObject = Record<string, unknown>;

/** Every error answer: the core's `{error, message}` (with `{app, version, reason}` for a refused version), the 428's `{error, terms}`, or a framework one. */
export const ErrorAnswerSchema = v.union([
  ErrorBodySchema,
  TeloVersionUnavailableSchema,
  v.object({ error: v.literal("terms_required"), terms: TermsSchema }),
  FrameworkErrorBodySchema,
]);

function jsonSchema(schema: v.GenericSchema, typeMode: "input" | "output"): JsonObject {
  // Coercions and checks have no JSON Schema form: the document keeps the shape they apply to.
  const converted = toJsonSchema(schema, { target: "draft-2020-12", typeMode, errorMode: "ignore" }) as JsonObject;
  delete converted.$schema;
  return converted;
}

const json = (schema: JsonObject) => ({ "application/json": { schema } });

function successResponse(spec: RouteSpec): JsonObject {
  if (spec.kind === "events") {
    return {
      "200": {
        description:
          "Server-Sent Events named by the RunEvent's `type` (`status`, `progress`, `debug`, `reachability`, `run`, `endpoints`, `route`) or `gap`; each event's `data` is a RunEvent (components/schemas/RunEvent).",
        content: { "text/event-stream": { schema: { type: "string" } } },
      },
    };
  }
  if (spec.kind === "terminal") {
    return { "101": { description: "Switched to the terminal WebSocket (binary output frames, text control frames)." } };
  }
  if (!spec.response) return { [String(spec.status)]: { description: "Done; no body." } };
  return { [String(spec.status)]: { description: spec.summary, content: json(jsonSchema(spec.response, "output")) } };
}

function operation(name: string, spec: RouteSpec): JsonObject {
  const parameters = [
    ...paramNames(spec.path).map((param) => ({ name: param, in: "path", required: true, schema: { type: "string" } })),
    ...(spec.query ?? []).map((param) => ({ name: param, in: "query", required: false, schema: { type: "string" } })),
    ...(spec.terms ? [{ name: TERMS_HEADER, in: "header", required: false, schema: { type: "string" } }] : []),
  ];
  return {
    operationId: name,
    summary: spec.summary,
    ...(parameters.length > 0 && { parameters }),
    ...(spec.body && { requestBody: { required: true, content: json(jsonSchema(spec.body, "input")) } }),
    responses: {
      ...successResponse(spec),
      default: { description: "An error answer (docs/api.md, Error bodies).", content: json({ $ref: "#/components/schemas/ErrorAnswer" }) },
    },
  };
}

/** `:id` → `{id}`, the OpenAPI form of a path parameter. */
const openApiPath = (path: string) => V1_PREFIX + path.replace(/:([A-Za-z]+)/g, "{$1}");

export function openApiDocument(version: string): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const [name, spec] of Object.entries(routes) as [string, RouteSpec][]) {
    if (spec.kind === "internal") continue;
    (paths[openApiPath(spec.path)] ??= {})[spec.method.toLowerCase()] = operation(name, spec);
  }
  return {
    openapi: "3.1.0",
    info: { title: "Telo runner (k8s-runner)", version, description: "The Telo runner /v1 contract." },
    paths,
    components: {
      schemas: {
        ErrorAnswer: jsonSchema(ErrorAnswerSchema, "output"),
        RunEvent: jsonSchema(RunEventSchema, "output"),
      },
    },
  };
}
