/**
 * Access control knobs (docs/operating.md "Access knobs"), all off by default so the contract is unchanged: a bearer
 * token, the address the api listens on, and a per-client rate limit on session creation.
 * The Origin allowlist is RUNNER_CORS_ORIGINS (src/config/core.ts).
 */
import { isIP } from "node:net";
import * as v from "valibot";
import { positiveIntVar, stringVar } from "./env-values.ts";

const MIN_TOKEN_LENGTH = 16;

const tokenVar = v.pipe(
  stringVar(undefined),
  v.check((token) => token === undefined || token.length >= MIN_TOKEN_LENGTH, `RUNNER_API_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters.`),
  v.check((token) => token === undefined || /^[\x21-\x7e]+$/.test(token), "RUNNER_API_TOKEN must be printable ASCII without spaces."),
);

const bindAddressVar = v.pipe(
  stringVar(undefined),
  v.check((address) => address === undefined || isIP(address) !== 0, "RUNNER_BIND_ADDRESS must be an IP address (e.g. 127.0.0.1, 0.0.0.0, ::)."),
);

/** Entries of the core env schema (one schema, so the deploy tests see every variable read). */
export const accessEnvEntries = {
  RUNNER_API_TOKEN: tokenVar,
  RUNNER_BIND_ADDRESS: bindAddressVar,
  RUNNER_CREATE_RATE_LIMIT: positiveIntVar("RUNNER_CREATE_RATE_LIMIT", undefined),
};

type AccessVars = { RUNNER_API_TOKEN: string | undefined; RUNNER_BIND_ADDRESS: string | undefined; RUNNER_CREATE_RATE_LIMIT: number | undefined };

export type AccessConfig = {
  /** Bearer token every /v1 request but /v1/health and /v1/ready must carry; undefined = none. */
  apiToken: string | undefined;
  /** Where the api listens; undefined = the entry's default (0.0.0.0, or 127.0.0.1 under `npm start`). */
  bindAddress: string | undefined;
  /** Session creations per client address per minute; undefined = unlimited. */
  createsPerMinute: number | undefined;
};

export function accessConfig(vars: AccessVars): AccessConfig {
  return {
    apiToken: vars.RUNNER_API_TOKEN,
    bindAddress: vars.RUNNER_BIND_ADDRESS,
    createsPerMinute: vars.RUNNER_CREATE_RATE_LIMIT,
  };
}
