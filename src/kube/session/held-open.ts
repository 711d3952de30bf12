/**
 * A Telo kernel run with inspect holds a finished application open for its debugger and says
 * so on the terminal; the pod then lives on, so these words are how the run is known to be over.
 */
const HELD_OPEN = "[inspect] holding the application open";

/** True when `bytes` carry the kernel's notice (a chunk is one write of the kernel's line). */
export function heldOpen(bytes: Uint8Array): boolean {
  return Buffer.from(bytes).includes(HELD_OPEN);
}
