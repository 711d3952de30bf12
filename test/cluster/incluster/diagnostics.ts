/**
 * What an in-cluster test prints when it fails: the runner pods' container states (restarts,
 * why the last one ended), the Service's EndpointSlices as kube-proxy reads them, the runner
 * namespace's recent events, the runner containers' log tails (the previous container's too
 * after a restart) and the tails of kube-proxy's and kube-router's logs. CI keeps only the test
 * output, so this is the evidence a failure there leaves.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, inject } from "vitest";
import { RUNNER_NAMESPACE } from "../fixture/cluster.ts";
import { kubectl } from "../pods.ts";

const TAIL_LINES = 40;

const tail = (text: string, lines = TAIL_LINES) => text.split("\n").slice(-lines).join("\n");
const attempt = (what: string, call: () => Promise<string>) => call().then((text) => `--- ${what}\n${text}`, (error: Error) => `--- ${what}: ${error.message}`);

type PodList = { items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { phase?: string; podIP?: string; conditions?: unknown[]; containerStatuses?: Array<{ name: string; restartCount: number }> } }> };

async function runnerState(): Promise<string> {
  const pods = JSON.parse(await kubectl(["-n", RUNNER_NAMESPACE, "get", "pods", "-o", "json"])) as PodList;
  const sections = [`--- runner pods\n${JSON.stringify(pods.items.map((pod) => ({ name: pod.metadata.name, deleting: pod.metadata.deletionTimestamp, ...pod.status })), null, 1)}`];
  for (const pod of pods.items) {
    for (const container of pod.status.containerStatuses ?? []) {
      const logs = ["-n", RUNNER_NAMESPACE, "logs", pod.metadata.name, "-c", container.name, `--tail=${TAIL_LINES}`];
      sections.push(await attempt(`logs ${pod.metadata.name}/${container.name}`, () => kubectl(logs)));
      if (container.restartCount > 0) sections.push(await attempt(`previous logs ${pod.metadata.name}/${container.name}`, () => kubectl([...logs, "--previous"])));
    }
  }
  return sections.join("\n");
}

/** Everything above as one text; a part that cannot be read says why instead. */
export async function runnerDiagnostics(): Promise<string> {
  const logDir = dirname(inject("realCluster").auditLog);
  const parts = await Promise.all([
    attempt("runner state", runnerState),
    attempt("endpointslices", () => kubectl(["-n", RUNNER_NAMESPACE, "get", "endpointslices", "-o", "yaml"])),
    attempt("events", () => kubectl(["-n", RUNNER_NAMESPACE, "get", "events", "--sort-by=.lastTimestamp"]).then((text) => tail(text))),
    ...["kube-proxy", "kube-router"].map((name) => attempt(`${name} log`, async () => tail(await readFile(join(logDir, `${name}.log`), "utf8")))),
  ]);
  return parts.join("\n");
}

/** Registers, for the calling file, the print of runnerDiagnostics() after each failed test. */
export function diagnoseFailures(): void {
  afterEach(async (context) => {
    if (context.task.result?.state !== "fail") return;
    console.log(`[in-cluster] diagnostics after "${context.task.name}" failed:\n${await runnerDiagnostics()}`);
  }, 60_000);
}
