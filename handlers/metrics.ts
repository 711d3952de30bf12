import type { Handler } from "hono";
import { SupervisorUnavailableError } from "../src/internal/client.ts";
import { internalPaths } from "../src/internal/protocol.ts";
import { scrapeBoth } from "../src/metrics/exposition.ts";
import type { HandlerDeps } from "./support.ts";

/** GET /metrics: both processes' figures (Prometheus text format); outside /v1, on the api port. */
export const metrics = (deps: Pick<HandlerDeps, "supervisor">): Handler => async (c) => {
  const figures = await deps.supervisor.call("GET", internalPaths.metrics).then(
    (answer) => (answer.status === 200 ? answer.body : undefined),
    (error: unknown) => {
      if (error instanceof SupervisorUnavailableError) return undefined;
      throw error;
    },
  );
  const { contentType, text } = await scrapeBoth(figures);
  return c.body(text, 200, { "content-type": contentType });
};
