import { randomBytes } from "node:crypto";

const BASE32_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
export const SESSION_ID_PATTERN = /^[a-z2-7]{12}$/;

/** 12 lowercase base32 characters (docs/api.md "Creating a session"): DNS-label and object-name safe. */
export function newSessionId(): string {
  return Array.from(randomBytes(12), (byte) => BASE32_ALPHABET[byte % 32]).join("");
}
