import { createHash, randomBytes } from "node:crypto";

const BASE32_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
export const SESSION_ID_PATTERN = /^[a-z2-7]{12}$/;

/** 12 lowercase base32 characters (docs/api.md "Creating a session"): DNS-label and object-name safe. */
export function newSessionId(): string {
  return Array.from(randomBytes(12), (byte) => BASE32_ALPHABET[byte % 32]).join("");
}

/**
 * The shard a session belongs to among several replicas (docs/replicas.md), fixed for its life:
 * SHA-256 of its id modulo the count. The api routes by it and the replicas own sessions by it.
 */
export function shardOf(sessionId: string, shardCount: number): number {
  if (!Number.isInteger(shardCount) || shardCount < 1) throw new RangeError(`shard count must be a positive integer, not ${shardCount}`);
  return Number(createHash("sha256").update(sessionId, "utf8").digest().readBigUInt64BE(0) % BigInt(shardCount));
}
