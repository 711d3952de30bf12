import type { Handler } from "hono";
import { RunnerError } from "../src/contract/problem.ts";
import { SupervisorUnavailableError } from "../src/internal/client.ts";
import { routes } from "../src/contract/routes.ts";
import { scrapeBoth } from "../src/metrics/exposition.ts";
import type { HandlerDeps } from "./support.ts";

/** GET /metrics: both processes' figures (Prometheus text format); outside /v1, on the api port. */
export const metrics = (deps: Pick<HandlerDeps, "supervisorFor">): Handler => async (c) => {
  const figures = await deps.supervisorFor().call(routes.metrics).catch((error: unknown) => {
    if (error instanceof SupervisorUnavailableError || error instanceof RunnerError) return undefined;
    throw error;
  });
  const { contentType, text } = await scrapeBoth(figures);
  return c.body(text, 200, { "content-type": contentType });
};
