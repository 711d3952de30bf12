/**
 * Request-body schemas of the `/v1` routes (docs/api.md "Routes"), with the coercions clients rely on
 * (docs/api.md "Error bodies"): numeric strings become integers, scalars become strings for env values, "true" and
 * "false" become booleans. Unknown properties are dropped, not rejected, except inside
 * `config` of a session, an opaque object whose known keys admission checks (the config gate,
 * src/contract/session-config.ts) and whose other keys are passed through to the backend.
 * `telo` is taken as any value here: a malformed one is admission's `invalid_telo_version`, not
 * a framework error.
 */
import * as v from "valibot";
import { TELO_VERSION_PATTERN } from "./telo-version.ts";
import {
  BundleFileSchema,
  IoModeSchema,
  ProtocolSchema,
  PullPolicySchema,
  SessionModeSchema,
} from "./wire.ts";

const integerLike = v.union([
  v.number(),
  v.pipe(
    v.string(),
    v.regex(/^\s*-?\d+(\.\d+)?\s*$/),
    v.transform((text) => Number(text)),
  ),
]);

function coercedInteger(min: number, max: number) {
  return v.pipe(
    v.unknown(),
    v.check((input) => v.is(integerLike, input), "must be integer"),
    v.transform((input) => v.parse(integerLike, input)),
    v.integer("must be integer"),
    v.minValue(min, `must be >= ${min}`),
    v.maxValue(max, `must be <= ${max}`),
  );
}

const coercedString = v.pipe(
  v.union([v.string(), v.number(), v.boolean()], "must be string"),
  v.transform((value) => String(value)),
);

const coercedBoolean = v.pipe(
  v.union([v.boolean(), v.picklist(["true", "false"]), v.picklist([0, 1])], "must be boolean"),
  v.transform((value) => value === true || value === "true" || value === 1),
);

const nonEmptyString = v.pipe(v.string("must be string"), v.minLength(1, "must NOT have fewer than 1 characters"));

export const PortMappingBodySchema = v.object({
  port: coercedInteger(1, 65535),
  protocol: ProtocolSchema,
});

/** A Telo version as the document describes it; admission checks the value itself. */
const TeloBodySchema = v.optional(
  v.pipe(
    v.unknown(),
    v.description("The Telo version whose kernel image runs this app (docs/telo-versions.md)."),
    v.metadata({ type: "string", pattern: TELO_VERSION_PATTERN.source }),
  ),
);

export const AppSpecBodySchema = v.object({
  name: v.pipe(nonEmptyString, v.maxLength(63, "must NOT have more than 63 characters")),
  entryRelativePath: nonEmptyString,
  ports: v.optional(v.array(PortMappingBodySchema)),
  io: v.optional(IoModeSchema),
  telo: TeloBodySchema,
});

const AppsBodySchema = v.pipe(
  v.array(AppSpecBodySchema),
  v.minLength(1, "must NOT have fewer than 1 items"),
);

/**
 * Env names as a Kubernetes apiserver accepts them (printable ASCII, no `=`, not empty): a
 * name it would refuse must be a 400 here, not a failed pod later. An array is not an env.
 */
const ENV_NAME = /^[\x20-\x3c\x3e-\x7e]+$/;
const EnvBodySchema = v.pipe(
  v.custom<Record<string, unknown>>((input) => typeof input === "object" && input !== null && !Array.isArray(input), "must be object"),
  v.record(v.pipe(v.string(), v.regex(ENV_NAME, "must have property names of printable ASCII characters other than '='")), coercedString),
);

const isJsonObject = (input: unknown) => typeof input === "object" && input !== null && !Array.isArray(input);

/** Any JSON object; its known keys as the document describes them (both superseded by `telo`). */
const SessionConfigBodySchema = v.pipe(
  v.custom<Record<string, unknown>>(isJsonObject, "must be object"),
  v.metadata({
    type: "object",
    additionalProperties: true,
    properties: {
      image: { type: "string", minLength: 1, deprecated: true },
      pullPolicy: { type: "string", enum: PullPolicySchema.options, deprecated: true },
    },
  }),
);

export const CreateSessionBodySchema = v.object({
  bundle: v.object({ entryRelativePath: nonEmptyString, files: v.array(BundleFileSchema) }),
  env: EnvBodySchema,
  config: v.optional(SessionConfigBodySchema, {}),
  telo: TeloBodySchema,
  ports: v.optional(v.array(PortMappingBodySchema)),
  inspect: v.optional(coercedBoolean, false),
  mode: v.optional(SessionModeSchema, "run"),
  agent: v.optional(nonEmptyString),
  apps: v.optional(AppsBodySchema),
});
export type CreateSessionBody = v.InferOutput<typeof CreateSessionBodySchema>;

export const AppSessionBodySchema = v.object({
  env: v.optional(EnvBodySchema),
  ports: v.optional(v.array(PortMappingBodySchema)),
  inspect: v.optional(coercedBoolean, false),
});
export type AppSessionBody = v.InferOutput<typeof AppSessionBodySchema>;

export const ProbeBodySchema = v.object({
  config: SessionConfigBodySchema,
});
export type ProbeBody = v.InferOutput<typeof ProbeBodySchema>;

export const SetAppsBodySchema = v.object({ apps: AppsBodySchema });
export type SetAppsBody = v.InferOutput<typeof SetAppsBodySchema>;

export const WorkspaceChangeSetBodySchema = v.object({
  write: v.optional(
    v.array(
      v.object({
        path: nonEmptyString,
        content: v.string(),
        encoding: v.optional(v.picklist(["utf8", "base64"])),
      }),
    ),
  ),
  delete: v.optional(v.array(nonEmptyString)),
});
export type WorkspaceChangeSetBody = v.InferOutput<typeof WorkspaceChangeSetBodySchema>;

/**
 * Internal, between replicas (docs/replicas.md "The warm pool beside several replicas"): the
 * answer a replica that claimed a warm pool pod hands to the replica that made it, which alone
 * holds the pod's token. The script the pod's shell sources; a claim answer is a few KiB.
 */
export const PoolClaimBodySchema = v.object({
  answer: v.pipe(v.string("must be string"), v.minLength(1, "must NOT be empty"), v.maxLength(1024 * 1024, "must be at most 1 MiB")),
});
