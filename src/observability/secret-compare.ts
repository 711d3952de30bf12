/**
 * Comparing a presented secret (an api token, the peer credential) with the expected one in
 * time that does not depend on how much of it matched.
 */
import { createHash, timingSafeEqual } from "node:crypto";

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Equal-length digests, so the comparison takes the same time whatever is offered. */
export function tokenMatches(offered: string | undefined, expected: string): boolean {
  return offered !== undefined && timingSafeEqual(digest(offered), digest(expected));
}
