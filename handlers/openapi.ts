import type { Handler } from "hono";
import { openApiDocument } from "../src/contract/openapi.ts";
import type { HandlerDeps } from "./support.ts";

/** GET /v1/openapi.json: generated once per mount, from the same schemas the routes use. */
export const openApi = (deps: HandlerDeps): Handler => {
  const document = openApiDocument(deps.version);
  return (c) => c.json(document);
};
