/**
 * Scripting the embedded simulated cluster through the real runner: with
 * RUNNER_SIMULATED_CLUSTER on, a session's `config.simulate` map becomes the simulator's
 * behaviour annotations on its pods (exit code, output, image-pull failure, OOM kill…; see
 * docs/simulated-cluster.md). Against a real cluster the key is ignored.
 *
 * A plain key describes the application, so it goes to the containers that run it: the
 * `session` container of a run pod, every `app-<name>` container of a watch pod (never the
 * runner-owned `workspace` container). A key naming a container (`exit-code.app-worker`) is
 * passed as it is.
 *
 * An application's declared ports are what its kernel listens on, which a real kernel reads from
 * its manifest and the simulated one cannot: each application container gets them as
 * `listen-ports` (a `simulate` key of that name wins). A pod's container ports do not say it,
 * since a warm pool pod declares none.
 */
import * as v from "valibot";
import type { StartSpec } from "../sessions/backend-seam.ts";
import { appContainerName } from "../kube/specs/names.ts";

/** The simulator reads its annotations under this prefix (src/sim/behaviour.ts). */
const SIMULATOR_ANNOTATION_PREFIX = "sim.k8s-runner.dev/";
const RUN_CONTAINER = "session";

const SimulateSchema = v.record(v.pipe(v.string(), v.regex(/^[a-z0-9.-]+$/)), v.union([v.string(), v.number(), v.boolean()]));

function applicationContainers(spec: Pick<StartSpec, "mode" | "apps">): { container: string; app: StartSpec["apps"][number] }[] {
  return spec.mode === "watch" ? spec.apps.map((app) => ({ container: appContainerName(app.name), app })) : spec.apps.slice(0, 1).map((app) => ({ container: RUN_CONTAINER, app }));
}

export function simulatedBehaviourAnnotations(spec: Pick<StartSpec, "mode" | "apps" | "config">): Record<string, string> {
  const containers = applicationContainers(spec);
  const listening = containers
    .filter(({ app }) => app.ports.length > 0)
    .map(({ container, app }) => [`${SIMULATOR_ANNOTATION_PREFIX}listen-ports.${container}`, app.ports.map(({ port, protocol }) => `${port}/${protocol}`).join(",")]);
  const simulate = v.safeParse(SimulateSchema, spec.config.simulate ?? {});
  const scripted = simulate.success ? Object.entries(simulate.output) : [];
  return Object.fromEntries([
    ...listening,
    ...scripted.flatMap(([key, value]) =>
      (key.includes(".") ? [key] : containers.map(({ container }) => `${key}.${container}`)).map((name) => [`${SIMULATOR_ANNOTATION_PREFIX}${name}`, String(value)]),
    ),
  ]);
}
