/**
 * Scripting the embedded simulated cluster through the real runner: with
 * RUNNER_SIMULATED_CLUSTER on, a session's `config.simulate` map becomes the simulator's
 * behaviour annotations on its pods (exit code, output, image-pull failure, OOM kill…; see
 * README "Simulated cluster"). Against a real cluster the key is ignored.
 *
 * A plain key describes the application, so it goes to the session's own container; a key
 * naming a container (`exit-code.body-fetch`) is passed as it is.
 */
import * as v from "valibot";
import type { StartSpec } from "../sessions/backend.ts";

/** The simulator reads its annotations under this prefix (src/sim/behaviour.ts). */
const SIMULATOR_ANNOTATION_PREFIX = "sim.k8s-runner.dev/";
const APPLICATION_CONTAINER = "session";

const SimulateSchema = v.record(v.pipe(v.string(), v.regex(/^[a-z0-9.-]+$/)), v.union([v.string(), v.number(), v.boolean()]));

export function simulatedBehaviourAnnotations(spec: StartSpec): Record<string, string> {
  const simulate = v.safeParse(SimulateSchema, spec.config.simulate ?? {});
  if (!simulate.success) return {};
  return Object.fromEntries(
    Object.entries(simulate.output).map(([key, value]) => [
      `${SIMULATOR_ANNOTATION_PREFIX}${key.includes(".") ? key : `${key}.${APPLICATION_CONTAINER}`}`,
      String(value),
    ]),
  );
}
