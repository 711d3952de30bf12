/**
 * Per-session workload tokens (docs/events-and-tokens.md "Workload tokens"): a catalog entry
 * naming a `tokenEnv` gets a fresh token per session, in its workload's env under that name,
 * and the session's matching endpoints carry it as `token`. Which endpoints match: every
 * endpoint of an app session (the catalog app is its one app), and `running.agent` of a watch
 * session whose agent names one. Minting takes its random bytes as input; the rest is pure.
 */
import { randomBytes } from "node:crypto";
import * as v from "valibot";
import type { RunnerEndpoint, RunStatus } from "../contract/wire.ts";

const BASE32_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** 160 random bits: exactly 32 base32 characters, no padding. */
export const TOKEN_BYTES = 20;
export const WORKLOAD_TOKEN_PATTERN = /^[a-z2-7]{32}$/;

export const WorkloadTokenSchema = v.object({
  /** The env variable the workload reads it from (the catalog entry's `tokenEnv`). */
  env: v.pipe(v.string(), v.minLength(1)),
  value: v.pipe(v.string(), v.regex(WORKLOAD_TOKEN_PATTERN)),
  /** Whose token it is: the app of an app session, or the co-resident agent of a watch session. */
  holder: v.picklist(["app", "agent"]),
});
export type WorkloadToken = v.InferOutput<typeof WorkloadTokenSchema>;

/** Lowercase RFC 4648 base32 of `bytes` (5 bits per character), unpadded. */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32_ALPHABET[(buffer >>> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** A new token: 160 bits from `random` (the system CSPRNG unless a test passes its own). */
export function mintWorkloadToken(random: (size: number) => Uint8Array = randomBytes): string {
  return base32(random(TOKEN_BYTES));
}

function withToken(endpoint: RunnerEndpoint, token: string): RunnerEndpoint {
  return { ...endpoint, token };
}

/** A status as the client sees it: a `running` status's matching endpoints carry the token. */
export function statusWithToken(status: RunStatus, token: WorkloadToken | undefined): RunStatus {
  if (!token || status.kind !== "running") return status;
  if (token.holder === "agent") return status.agent ? { ...status, agent: withToken(status.agent, token.value) } : status;
  return status.endpoints ? { ...status, endpoints: status.endpoints.map((endpoint) => withToken(endpoint, token.value)) } : status;
}

/** Endpoints added to an app on a reload carry the token when that app holds it. */
export function addedWithToken(added: RunnerEndpoint[] | undefined, token: WorkloadToken | undefined): RunnerEndpoint[] | undefined {
  if (!added || token?.holder !== "app") return added;
  return added.map((endpoint) => withToken(endpoint, token.value));
}
