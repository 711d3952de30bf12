/** Reading a Prometheus text exposition in tests: scrape over HTTP, parse, look series up. */
export type Sample = { name: string; labels: Record<string, string>; value: number };

/**
 * Parses the text format's sample lines (`name{a="x",b="y"} value`); refuses a malformed line
 * and a family declared twice (which Prometheus rejects: each process's figures must merge).
 */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  const families = new Set<string>();
  for (const line of text.split("\n")) {
    const declared = /^# TYPE (\S+) /.exec(line)?.[1];
    if (declared !== undefined) {
      if (families.has(declared)) throw new Error(`family ${declared} is declared twice`);
      families.add(declared);
    }
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

export async function scrape(baseUrl: string): Promise<Sample[]> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  if (!response.headers.get("content-type")?.startsWith("text/plain")) throw new Error(`GET /metrics is ${response.headers.get("content-type")}`);
  return parseExposition(await response.text());
}

/** The sum of the series of `name` whose labels include `labels` (0 when there is none). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}
