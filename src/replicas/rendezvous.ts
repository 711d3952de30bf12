/**
 * Which live replica owns which shard: rendezvous (highest random weight) hashing. Every replica
 * that sees the same set of live members computes the same owner for every shard, with no
 * coordination; a member that leaves moves only its own shards, and one that joins takes only
 * the shards it now wins, spread over the others (docs/replicas.md).
 */
import { createHash } from "node:crypto";

/** A 64-bit score of a pair, from SHA-256: stable across processes, builds and platforms. */
function score(shard: number, member: string): bigint {
  return createHash("sha256").update(`${shard}\u0000${member}`, "utf8").digest().readBigUInt64BE(0);
}

/** The member with the highest score for `shard`; ties (a SHA-256 collision) go to the smaller name. */
export function ownerOf(shard: number, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1n;
  for (const member of members) {
    const s = score(shard, member);
    if (s > bestScore || (s === bestScore && best !== undefined && member < best)) {
      best = member;
      bestScore = s;
    }
  }
  return best;
}

/** Every shard's owner among `members` (index = shard). */
export function assignment(shardCount: number, members: readonly string[]): (string | undefined)[] {
  return Array.from({ length: shardCount }, (_, shard) => ownerOf(shard, members));
}
