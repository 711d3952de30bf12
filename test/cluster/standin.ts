/**
 * The manifest lines that script the kernel stand-in (test/cluster/images/kernel), written from
 * the same `simulate` map the simulated cluster reads from `config.simulate`, so one test scripts
 * both clusters alike. Keys the stand-in has no counterpart for are left out: a test that needs
 * them is a simulator-only test.
 */
import type { PortMapping } from "../../src/contract/wire.ts";

const SAME_MEANING = ["exit-code", "run-ms", "oom", "report-resize", "tick-ms"];

/**
 * The lines for the app running in `container` (`session`, `app-<name>`): a key, or the same
 * key suffixed `.<container>` as the simulator scopes a key to one container, which wins.
 */
export function standinManifest(simulate: Record<string, string | number | boolean>, ports: readonly PortMapping[], container: string): string {
  const chosen = new Map<string, string | number | boolean>();
  for (const key of SAME_MEANING) {
    const value = simulate[`${key}.${container}`] ?? simulate[key];
    if (value !== undefined) chosen.set(key, value);
  }
  const lines = [...chosen].map(([key, value]) => `# standin ${key}=${String(value)}`);
  // The simulator writes `output` verbatim; the stand-in's line carries newlines escaped.
  if (simulate.output !== undefined) lines.push(`# standin output=${String(simulate.output).replace(/\n/g, "\\n")}`);
  // The simulator listens on the declared container ports; the kernel learns its ports from its manifest.
  if (ports.length > 0) lines.push(`# standin ports=${ports.map(({ port, protocol }) => `${port}/${protocol}`).join(",")}`);
  return lines.map((line) => `${line}\n`).join("");
}
