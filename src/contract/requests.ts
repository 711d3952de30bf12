/**
 * Request-body schemas of the `/v1` routes (docs/api.md "Routes"), with the coercions clients rely on
 * (docs/api.md "Error bodies"): numeric strings become integers, scalars become strings for env values, "true" and
 * "false" become booleans. Unknown properties are dropped, not rejected, except inside
 * `config` of a session, whose extra keys are passed through to the backend.
 */
import * as v from "valibot";
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

export const AppSpecBodySchema = v.object({
  name: v.pipe(nonEmptyString, v.maxLength(63, "must NOT have more than 63 characters")),
  entryRelativePath: nonEmptyString,
  ports: v.optional(v.array(PortMappingBodySchema)),
  io: v.optional(IoModeSchema),
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

export const CreateSessionBodySchema = v.object({
  bundle: v.object({ entryRelativePath: nonEmptyString, files: v.array(BundleFileSchema) }),
  env: EnvBodySchema,
  config: v.looseObject({
    image: nonEmptyString,
    pullPolicy: PullPolicySchema,
    registryUrl: v.optional(nonEmptyString),
  }),
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
  config: v.object({ image: nonEmptyString, pullPolicy: PullPolicySchema }),
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
