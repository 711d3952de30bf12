/**
 * The OpenAPI document of /v1: served as generated, describing exactly the routes the app
 * serves, and (through the answer tap every contract test goes through) holding every answer.
 */
import { createServer } from "node:http";
import { createNodeWebSocket } from "@hono/node-ws";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createRunnerRoutes } from "../../handlers/index.ts";
import { openApiDocument } from "../../src/contract/openapi.ts";
import { SupervisorClient } from "../../src/internal/client.ts";
import { RUNNER_VERSION } from "../../src/version.ts";
import { startAnswerTap } from "../support/answer-tap.ts";
import { runnerForSuite } from "../support/suite-runner.ts";
import { sessionBody } from "../support/session-body.ts";

type Operations = Record<string, Record<string, unknown>>;

describe("the OpenAPI document", () => {
  const runner = runnerForSuite();

  it("is served at /v1/openapi.json as OpenAPI 3.1, generated from the route table", async () => {
    const response = await fetch(`${runner.baseUrl}/v1/openapi.json`);
    expect(response.status).toBe(200);
    const served = await response.json();
    expect(served).toMatchObject({ openapi: "3.1.0", info: { version: RUNNER_VERSION } });
    expect(served).toEqual(openApiDocument(RUNNER_VERSION));
  });

  it("describes exactly the routes the app serves", () => {
    const app = new Hono();
    const { upgradeWebSocket } = createNodeWebSocket({ app });
    const routes = createRunnerRoutes({ supervisor: new SupervisorClient("/nonexistent.sock"), corsOrigins: undefined, version: "x", upgradeWebSocket });
    // `ALL` entries are the CORS and body-limit middleware, not operations.
    const served = routes.routes.filter((route) => route.method !== "ALL").map((route) => `${route.method} ${route.path}`);
    const paths = openApiDocument("x").paths as Record<string, Operations>;
    const documented = Object.entries(paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`),
    );
    expect(new Set(served)).toEqual(new Set(documented));
    expect(served).toHaveLength(documented.length);
  });

  it("answers every documented operation from its route (never the unknown-route 404)", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const paths = openApiDocument(RUNNER_VERSION).paths as Record<string, Operations>;
    for (const [path, operations] of Object.entries(paths)) {
      for (const method of Object.keys(operations)) {
        if (path.endsWith("/events") || path.endsWith("/io")) continue; // streams: their own tests
        const url = `${runner.baseUrl}${path.replace("{id}", sessionId).replace("{name}", "nothing")}`;
        const response = await fetch(url, { method: method.toUpperCase(), headers: { "content-type": "application/json" }, body: method === "get" ? undefined : "{}" });
        const body = (response.status === 204 ? undefined : await response.json()) as { message?: string } | undefined;
        expect(body?.message ?? "", `${method} ${path}`).not.toMatch(/^Route /);
      }
    }
    expect(runner.answers.checked).toBeGreaterThan(Object.keys(paths).length);
  });
});

describe("the answer tap", () => {
  it("reports an answer whose shape the document does not describe", async () => {
    const upstream = createServer((request, response) => {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ sessionId: 7 }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const tap = await startAnswerTap((upstream.address() as { port: number }).port, openApiDocument("x"));
    try {
      expect((await fetch(`${tap.url}/v1/sessions/abc`)).status).toBe(200);
      expect((await fetch(`${tap.url}/v1/health`)).status).toBe(200);
      expect(tap.checked).toBe(2);
      expect(tap.violations).toHaveLength(2);
      expect(tap.violations[0]).toMatch(/^GET \/v1\/sessions\/abc → 200: /);
    } finally {
      await tap.close();
      upstream.close();
    }
  });
});
