/**
 * Node options every kernel runs with, merged into the session's own `NODE_OPTIONS`.
 * `--report-exclude-network`: a diagnostic report (which Node writes on a fatal error) otherwise
 * resolves the host's network interfaces and peers by DNS, which in a sandbox with no reachable
 * resolver stalls the crashing kernel for the resolver's whole timeout.
 */
export const KERNEL_NODE_OPTIONS: readonly string[] = ["--report-exclude-network"];

/** The session's options first, then each kernel option the session did not already give. */
export function mergedNodeOptions(session: string | undefined): string {
  const given = (session ?? "").split(/\s+/).filter((word) => word !== "");
  const added = KERNEL_NODE_OPTIONS.filter((option) => !given.includes(option));
  return [...given, ...added].join(" ");
}

/** A kernel container's env: the session's, with `NODE_OPTIONS` merged (in its place if set, else last). */
export function withKernelNodeOptions(env: Readonly<Record<string, string>>): Record<string, string> {
  return { ...env, NODE_OPTIONS: mergedNodeOptions(env.NODE_OPTIONS) };
}
