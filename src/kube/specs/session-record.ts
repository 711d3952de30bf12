/**
 * The session record a pod carries so that a restarted supervisor can re-adopt it
 * (docs/kubernetes.md "The record on the pod"). One JSON annotation holds what the pod spec
 * does not say plainly. Environment values are deliberately absent: they may be secrets, and
 * they are in the container spec already, so the record keeps their names only.
 */
import * as v from "valibot";
import { parseJsonAs } from "../../contract/parse-json.ts";
import type { V1Pod } from "@kubernetes/client-node";
import { SESSION_ID_PATTERN } from "../../contract/ids.ts";
import { PullPolicySchema, ResolvedAppSchema, SessionModeSchema } from "../../contract/wire.ts";

export const SESSION_RECORD_ANNOTATION = "telo.run/session";

/**
 * The part of a session's config the backend acts on; other keys (`registryUrl`, …) are dropped.
 * Records written before Telo versions had the same shape, and apps without `telo`: they read.
 */
const recordedConfigSchema = v.object({
  image: v.optional(v.pipe(v.string(), v.minLength(1))),
  pullPolicy: v.optional(PullPolicySchema),
});

export const sessionRecordSchema = v.object({
  sessionId: v.pipe(v.string(), v.regex(SESSION_ID_PATTERN)),
  mode: SessionModeSchema,
  createdAt: v.pipe(v.string(), v.isoTimestamp()),
  apps: v.pipe(v.array(ResolvedAppSchema), v.minLength(1)),
  /** Catalog name of the co-resident agent, when the session has one. */
  agent: v.optional(v.string()),
  inspect: v.boolean(),
  /** A predefined-app session (RUNNER_APPS): the image's own entrypoint, no bundle. */
  selfContained: v.boolean(),
  config: recordedConfigSchema,
  /** Names of the session env, in order; values live only in the container spec. */
  envNames: v.array(v.string()),
});

export type SessionRecord = v.InferOutput<typeof sessionRecordSchema>;

/**
 * The annotation map entry a pod builder merges into `metadata.annotations`. Parsing first drops
 * any key the schema does not name, so nothing beyond the record (an env value) can leak in.
 */
export function sessionRecordAnnotation(record: SessionRecord): Record<string, string> {
  return { [SESSION_RECORD_ANNOTATION]: JSON.stringify(v.parse(sessionRecordSchema, record)) };
}

/** The record a pod carries; undefined for a pod with none or with one that does not parse. */
export function parseSessionRecord(pod: V1Pod): SessionRecord | undefined {
  const text = pod.metadata?.annotations?.[SESSION_RECORD_ANNOTATION];
  if (text === undefined) return undefined;
  return parseJsonAs(sessionRecordSchema, text);
}
