/**
 * What `GET /metrics` serves: the api process's figures and the supervisor's, fetched over
 * the internal socket, as one Prometheus exposition. A scrape while the supervisor is away
 * still answers, with the api's own figures and runner_supervisor_up 0.
 */
import { Gauge } from "prom-client";
import * as v from "valibot";
import { MetricsSnapshotSchema } from "../contract/responses.ts";
import { metricsSnapshot, registry, renderExposition } from "./registry.ts";

const supervisorUp = new Gauge({
  name: "runner_supervisor_up",
  help: "1 when this scrape holds the supervisor's figures, 0 when the supervisor could not be reached.",
  registers: [registry],
});

/** `supervisorFigures` is the supervisor's answer body, undefined when it could not be had. */
export async function scrapeBoth(supervisorFigures: unknown): Promise<{ contentType: string; text: string }> {
  const parsed = v.safeParse(MetricsSnapshotSchema, supervisorFigures);
  supervisorUp.set(parsed.success ? 1 : 0);
  const own = await metricsSnapshot();
  return renderExposition(parsed.success ? [own, parsed.output] : [own]);
}
