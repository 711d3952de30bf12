/**
 * Membership of the replicas (docs/replicas.md): each replica holds a member Lease named after
 * its identity, carrying its peer address in an annotation; every replica lists the member
 * Leases and judges which are live on its own clock. The live set feeds the rendezvous hashing
 * of shards; the addresses are where a request for another replica's session is forwarded.
 */
import * as v from "valibot";
import { isHeld, observe, viewOf, type Lease, type Observation } from "./lease-rules.ts";
import type { LeaseMeta, LeaseStore } from "./lease-store.ts";
import { IdentitySchema } from "../config/replicas.ts";

/** The label every Lease of the replicas carries, and its values. */
export const ROLE_LABEL = "telo.run/lease-role";
export const PEER_ADDRESS_ANNOTATION = "telo.run/peer-address";


/** The names of every Lease of the replicas, under one prefix (one runner installation). */
export function leaseNames(prefix: string) {
  return {
    member: (identity: string) => `${prefix}-member-${v.parse(IdentitySchema, identity)}`,
    shard: (shard: number) => `${prefix}-shard-${shard}`,
    duties: `${prefix}-duties`,
  };
}

/** Labels and annotations of a member Lease. */
export function memberMeta(installation: string, peerAddress: string): LeaseMeta {
  return { labels: { [ROLE_LABEL]: "member", "app.kubernetes.io/instance": installation }, annotations: { [PEER_ADDRESS_ANNOTATION]: peerAddress } };
}

export function memberSelector(installation: string): string {
  return `${ROLE_LABEL}=member,app.kubernetes.io/instance=${installation}`;
}

export interface Member {
  identity: string;
  peerAddress: string;
}

/**
 * The live members among the observed member Leases at `now`, sorted by identity: held (a holder
 * and not expired on this clock) and carrying a peer address.
 */
export function liveMembers(observations: Iterable<{ observation: Observation; lease: Lease }>, now: number): Member[] {
  const live: Member[] = [];
  for (const { observation, lease } of observations) {
    const peerAddress = lease.metadata.annotations?.[PEER_ADDRESS_ANNOTATION];
    if (!isHeld(observation, now) || !peerAddress) continue;
    live.push({ identity: observation.lease.holder, peerAddress });
  }
  return live.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
}

/** One replica's view of the members, refreshed by listing their Leases. */
export class MemberDirectory {
  readonly #seen = new Map<string, { observation: Observation; lease: Lease }>();

  constructor(
    private readonly store: LeaseStore,
    private readonly installation: string,
    private readonly now: () => number,
  ) {}

  /** Lists the member Leases and returns the live members; a Lease gone from the list is forgotten. */
  async refresh(): Promise<Member[]> {
    const leases = await this.store.list(memberSelector(this.installation));
    const at = this.now();
    const names = new Set<string>();
    for (const lease of leases) {
      names.add(lease.metadata.name);
      const observation = observe(this.#seen.get(lease.metadata.name)?.observation, viewOf(lease), at);
      this.#seen.set(lease.metadata.name, { observation, lease });
    }
    for (const name of this.#seen.keys()) if (!names.has(name)) this.#seen.delete(name);
    return this.live();
  }

  /** The live members as of the last refresh, judged at the current time. */
  live(): Member[] {
    return liveMembers(this.#seen.values(), this.now());
  }
}
