import type { Handler } from "hono";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, relay } from "./support.ts";

/** GET /v1/capabilities: re-resolved by the supervisor on every request (the image picker refreshes). */
export const capabilities = (deps: HandlerDeps): Handler => async (c) =>
  relay(c, await deps.supervisor.call("GET", internalPaths.capabilities));
