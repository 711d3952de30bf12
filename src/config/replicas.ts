/**
 * Several replicas (docs/replicas.md): a replica identity turns the Lease coordination on; the
 * address other replicas' api processes reach this supervisor at; the shard count and the lease
 * duration. Unset identity = one replica, no Leases, as every install before.
 */
import * as v from "valibot";
import { ConfigError, positiveIntVar, stringVar } from "./env-values.ts";
import { formatPeerAddress, type PeerConfig, parsePeerAddress } from "./peer.ts";

const MAX_SHARDS = 1024;

/**
 * A replica identity: its pod name in a cluster. It is part of Lease names, so it must be a
 * DNS-1123 label (a pod name of a Deployment or StatefulSet is one).
 */
export const IdentitySchema = v.pipe(v.string(), v.regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "a replica identity must be a DNS-1123 label (lowercase letters, digits and '-', at most 63)"));

/**
 * Timing of a Lease holder: renew every `retryMs`; stop acting as holder once `renewDeadlineMs`
 * passed without a successful renew (before any observer may call the Lease expired, which is
 * `durationSeconds` after it saw the last renew).
 */
export interface LeaseTiming {
  durationSeconds: number;
  renewDeadlineMs: number;
  retryMs: number;
}

const identityVar = v.pipe(
  stringVar(undefined),
  v.check(
    (raw) => raw === undefined || v.is(IdentitySchema, raw),
    (issue) => `RUNNER_REPLICA_ID must be a DNS-1123 label (lowercase letters, digits and '-', at most 63; a pod name is one), got '${String(issue.input)}'.`,
  ),
);

const advertiseVar = v.pipe(
  stringVar(undefined),
  v.check((raw) => raw === undefined || parsePeerAddress(raw) !== undefined, "RUNNER_PEER_ADVERTISE must be IP:port (this pod's IP and the peer port, e.g. 10.0.0.5:8065 or [fd00::5]:8065)."),
);

/** Entries of the core env schema (one schema, so the deploy tests see every variable read). */
export const replicaEnvEntries = {
  RUNNER_REPLICA_ID: identityVar,
  RUNNER_PEER_ADVERTISE: advertiseVar,
  RUNNER_SHARDS: v.pipe(positiveIntVar("RUNNER_SHARDS", 32), v.maxValue(MAX_SHARDS, `RUNNER_SHARDS must be at most ${MAX_SHARDS}.`)),
  RUNNER_LEASE_DURATION_SECONDS: v.pipe(positiveIntVar("RUNNER_LEASE_DURATION_SECONDS", 15), v.minValue(2, "RUNNER_LEASE_DURATION_SECONDS must be at least 2.")),
};

type ReplicaVars = { [Name in keyof typeof replicaEnvEntries]: v.InferOutput<(typeof replicaEnvEntries)[Name]> };

/**
 * client-go's proportions (15 s duration, 10 s renew deadline, 2 s retry) at any duration: a
 * holder stops acting a third of a duration before anyone may take over.
 */
export function leaseTiming(durationSeconds: number): LeaseTiming {
  return { durationSeconds, renewDeadlineMs: Math.round((durationSeconds * 2000) / 3), retryMs: Math.round((durationSeconds * 2000) / 15) };
}

export type ReplicaSettings = { identity: string; peerAddress: string; shardCount: number; timing: LeaseTiming };

/** Read from the kube variables; the peer part is checked at startup, once both configs are known. */
export function replicaVars(env: ReplicaVars) {
  return { identity: env.RUNNER_REPLICA_ID, advertise: env.RUNNER_PEER_ADVERTISE, shardCount: env.RUNNER_SHARDS, durationSeconds: env.RUNNER_LEASE_DURATION_SECONDS };
}

/**
 * The replica settings, or undefined for a single replica. A replica must be reachable by the
 * others (a peer listener, the credential, an address to advertise): without them a request
 * for its sessions could not be forwarded, so startup refuses rather than run half-wired.
 */
export function replicaSettings(vars: ReturnType<typeof replicaVars>, peer: PeerConfig): ReplicaSettings | undefined {
  if (vars.identity === undefined) {
    if (vars.advertise !== undefined) throw new ConfigError("RUNNER_PEER_ADVERTISE needs RUNNER_REPLICA_ID: only a replica advertises its peer address.");
    return undefined;
  }
  if (!peer.listen) {
    throw new ConfigError("RUNNER_REPLICA_ID needs RUNNER_PEER_LISTEN: the other replicas reach this one's sessions through its peer port.");
  }
  const unspecified = peer.listen.host === "0.0.0.0" || peer.listen.host === "::";
  const advertised = vars.advertise === undefined ? undefined : parsePeerAddress(vars.advertise);
  const advertise = advertised ? formatPeerAddress(advertised) : unspecified ? undefined : formatPeerAddress(peer.listen);
  if (advertise === undefined) {
    throw new ConfigError("RUNNER_REPLICA_ID with RUNNER_PEER_LISTEN on every address needs RUNNER_PEER_ADVERTISE: the address the other replicas dial (the pod's IP and the peer port).");
  }
  return { identity: vars.identity, peerAddress: advertise, shardCount: vars.shardCount, timing: leaseTiming(vars.durationSeconds) };
}
