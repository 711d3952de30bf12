/**
 * The peer link (docs/relay.md): a supervisor may also listen on TCP for the api processes of
 * other runner replicas, which must present the shared credential on every stream. Both
 * variables are off by default; the listen address without a credential is refused, since an
 * open port would hand any caller every session.
 */
import { isIP } from "node:net";
import * as v from "valibot";
import { ConfigError, stringVar } from "./env-values.ts";

const MIN_SECRET_LENGTH = 32;

const secretVar = v.pipe(
  stringVar(undefined),
  v.check((secret) => secret === undefined || secret.length >= MIN_SECRET_LENGTH, `RUNNER_PEER_SECRET must be at least ${MIN_SECRET_LENGTH} characters.`),
  v.check((secret) => secret === undefined || /^[\x21-\x7e]+$/.test(secret), "RUNNER_PEER_SECRET must be printable ASCII without spaces."),
);

export type PeerAddress = { host: string; port: number };

/**
 * `host:port`, `[v6]:port`, or `v6:port` unbracketed (what `$(POD_IP):8065` gives in a pod spec
 * on an IPv6 pod network; the port is required, so the last `:` is the separator); the host an
 * IP address; else undefined.
 */
export function parsePeerAddress(raw: string): PeerAddress | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)|([0-9a-fA-F:.]*:[0-9a-fA-F:.]*)):(\d{1,5})$/.exec(raw);
  const host = match?.[1] ?? match?.[2] ?? match?.[3];
  const port = Number(match?.[4]);
  if (host === undefined || isIP(host) === 0 || !(port >= 1 && port <= 65535)) return undefined;
  return { host, port };
}

/** `host:port`, an IPv6 host in brackets: the one spelling a replica advertises and peers dial. */
export function formatPeerAddress({ host, port }: PeerAddress): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

const listenVar = v.pipe(
  stringVar(undefined),
  v.check(
    (raw) => raw === undefined || parsePeerAddress(raw) !== undefined,
    "RUNNER_PEER_LISTEN must be IP:port (e.g. 10.0.0.5:8063, [::]:8063, 0.0.0.0:8063).",
  ),
);

const supervisorVar = v.pipe(
  stringVar(undefined),
  v.check(
    (raw) => raw === undefined || parsePeerAddress(raw) !== undefined,
    "RUNNER_PEER_SUPERVISOR must be IP:port (a supervisor's RUNNER_PEER_LISTEN), e.g. 10.0.0.5:8063.",
  ),
);

/** Entries of the core env schema (one schema, so the deploy tests see every variable read). */
export const peerEnvEntries = {
  RUNNER_PEER_LISTEN: listenVar,
  RUNNER_PEER_SECRET: secretVar,
  RUNNER_PEER_SUPERVISOR: supervisorVar,
};

export type PeerConfig = {
  /** Where the supervisor accepts peers' api processes; undefined = the Unix socket only. */
  listen: PeerAddress | undefined;
  /** The credential a peer presents (and this replica's api presents to others). */
  secret: string | undefined;
  /**
   * The api process's supervisor over TCP instead of the Unix socket (a supervisor in another
   * process or pod; the benchmarks' peer link); undefined = the Unix socket.
   */
  supervisor: PeerAddress | undefined;
};

type PeerVars = {
  RUNNER_PEER_LISTEN: string | undefined;
  RUNNER_PEER_SECRET: string | undefined;
  RUNNER_PEER_SUPERVISOR: string | undefined;
  RUNNER_REPLICA_ID: string | undefined;
};

export function peerConfig(vars: PeerVars): PeerConfig {
  // A replica without a configured credential shares one its supervisor keeps in the cluster
  // (src/replicas/peer-credential.ts); anything else listening or dialling needs it said.
  if (vars.RUNNER_PEER_LISTEN !== undefined && vars.RUNNER_PEER_SECRET === undefined && vars.RUNNER_REPLICA_ID === undefined) {
    throw new ConfigError("RUNNER_PEER_LISTEN needs RUNNER_PEER_SECRET: peers are authenticated with the shared credential.");
  }
  for (const name of ["RUNNER_PEER_SUPERVISOR"] as const) {
    if (vars[name] !== undefined && vars.RUNNER_PEER_SECRET === undefined) {
      throw new ConfigError(`${name} needs RUNNER_PEER_SECRET: peers are authenticated with the shared credential.`);
    }
  }
  const address = (raw: string | undefined) => (raw === undefined ? undefined : parsePeerAddress(raw));
  return { listen: address(vars.RUNNER_PEER_LISTEN), secret: vars.RUNNER_PEER_SECRET, supervisor: address(vars.RUNNER_PEER_SUPERVISOR) };
}
