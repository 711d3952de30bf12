/**
 * Nesting depth of parsed JSON, measured without recursion. JSON.parse accepts any depth, but
 * JSON.stringify and every recursive walk after it overflow the stack on a few thousand levels
 * (10,000 levels inside `config` once overflowed the stack and answered 503 instead of 400). No `/v1` body
 * needs more than a handful of levels.
 */
export const MAX_JSON_DEPTH = 64;

export function jsonDeeperThan(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(current)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
