import { randomBytes } from "node:crypto";

const BASE32_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
export const SESSION_ID_PATTERN = /^[a-z2-7]{12}$/;

/** 12 lowercase base32 characters (contract.md §4.1): DNS-label and object-name safe. */
export function newSessionId(): string {
  return Array.from(randomBytes(12), (byte) => BASE32_ALPHABET[byte % 32]).join("");
}
