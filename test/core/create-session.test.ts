/**
 * POST /v1/sessions and the apps door through real HTTP against both processes: validation
 * order and shapes, terms, admission refusals, the workload env (docs/api.md "Creating a session").
 */
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerClient } from "../../src/client/index.ts";
import { type RunnerUnderTest, startRunner } from "../support/processes.ts";
import { runnerForSuite } from "../support/suite-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { framesUntilText, textOf } from "../support/streams.ts";

async function post(runner: RunnerUnderTest, path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${runner.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** Runs `!env NAME` in the session's terminal and returns the printed value. */
async function workloadEnvValue(client: RunnerClient, sessionId: string, name: string): Promise<string> {
  const terminal = client.terminal(sessionId);
  await terminal.send(`!env ${name}\n`);
  const text = textOf(await framesUntilText(terminal, `${name}=`));
  terminal.close();
  return /=(.*)\r\n/.exec(text.slice(text.indexOf(`${name}=`)))?.[1] ?? "";
}

describe("POST /v1/sessions", () => {
  const runner = runnerForSuite({
      env: {
        TELO_REGISTRY_URL: "https://runner-default.example",
        RUNNER_SECRET_OF_THE_RUNNER: "must-not-leak",
        RUNNER_APPS: JSON.stringify({
          tool: { image: "acme/tool:1", title: "Acme tool", env: { TOKEN: "operator", SHARED: "operator" } },
        }),
      },
    });

  it("answers 201 at once with the session's id, stream URL and creation time", async () => {
    const { status, body } = await post(runner, "/v1/sessions", sessionBody({ script: { startDelayMs: 500 } }));
    expect(status).toBe(201);
    expect(body.sessionId).toMatch(/^[a-z2-7]{12}$/);
    expect(body.streamUrl).toBe(`/v1/sessions/${body.sessionId}/events`);
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
    // Registered immediately, still starting.
    const document = await runner.client.getSession(body.sessionId);
    expect(document).toEqual({
      sessionId: body.sessionId,
      status: { kind: "starting" },
      mode: "run",
      apps: [{ name: "app", io: "tty", generation: 0, ports: [] }],
      createdAt: body.createdAt,
      timeline: [{ stage: "admitted", at: body.createdAt }],
    });
  });

  it.each([
    [{ bundle: {}, env: {}, config: {} }, "body/bundle must have required property 'entryRelativePath'"],
    [{ env: {} }, "body must have required property 'bundle'"],
    [{ ...sessionBody(), config: ["image"] }, "body/config must be object"],
    [{ ...sessionBody(), ports: [{ port: 70000, protocol: "tcp" }] }, "body/ports/0/port must be <= 65535"],
    [{ ...sessionBody(), apps: [] }, "body/apps must NOT have fewer than 1 items"],
    [[], "body must be object"],
  ])("refuses a malformed body with the framework's 400: %j", async (body, message) => {
    const { status, body: answer } = await post(runner, "/v1/sessions", body);
    expect(status).toBe(400);
    expect(answer).toEqual({ statusCode: 400, code: "FST_ERR_VALIDATION", error: "Bad Request", message });
  });

  it("coerces numeric strings, scalar env values and boolean strings", async () => {
    const { status, body } = await post(runner, "/v1/sessions", {
      ...sessionBody(),
      env: { COUNT: 3 },
      ports: [{ port: "3000", protocol: "tcp" }],
      inspect: "true",
      unknownField: "dropped",
    });
    expect(status).toBe(201);
    expect((await runner.client.getSession(body.sessionId)).apps[0]?.ports).toEqual([{ port: 3000, protocol: "tcp" }]);
    expect(await workloadEnvValue(runner.client, body.sessionId, "COUNT")).toBe("3");
  });

  it("answers malformed JSON, a wrong media type and an oversized body with framework errors", async () => {
    expect(await post(runner, "/v1/sessions", "{not json")).toMatchObject({ status: 400, body: { code: "FST_ERR_CTP_INVALID_JSON_BODY" } });
    const textual = await fetch(`${runner.baseUrl}/v1/sessions`, { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" });
    expect(textual.status).toBe(415);
    const huge = { ...sessionBody(), bundle: { entryRelativePath: "a", files: [{ relativePath: "a", contents: "x".repeat(1_100_000) }] } };
    const oversized = await post({ ...runner, baseUrl: runner.directUrl }, "/v1/sessions", huge);
    expect(oversized.status).toBe(413);
    expect(oversized.body).toMatchObject({ statusCode: 413, code: "FST_ERR_CTP_BODY_TOO_LARGE", error: "Payload Too Large" });
  });

  it("refuses traversal in the entry or any file path", async () => {
    for (const bundle of [
      { entryRelativePath: "../../../etc/shadow", files: [] },
      { entryRelativePath: "telo.yaml", files: [{ relativePath: "a/../../x", contents: "" }] },
    ]) {
      const { status, body } = await post(runner, "/v1/sessions", { ...sessionBody(), bundle });
      expect(status).toBe(400);
      expect(body.error).toBe("invalid_bundle");
      expect(body.message).toMatch(/^invalid bundle relativePath '/);
    }
  });

  // The config is opaque (docs/telo-versions.md): only its known keys are checked, by the runner's gate, not the framework.
  it.each([
    [{ image: "", pullPolicy: "missing" }, "`config.image` must be a non-empty string when given"],
    [{ image: 7 }, "`config.image` must be a non-empty string when given"],
    [{ image: "x", pullPolicy: "sometimes" }, "`config.pullPolicy` must be one of missing, always, never when given"],
  ])("refuses a known config key of the wrong shape with invalid_config: %j", async (config, message) => {
    expect(await post(runner, "/v1/sessions", { ...sessionBody(), config })).toMatchObject({ status: 400, body: { error: "invalid_config", message } });
  });

  it("takes no config, and a config of unknown keys only", async () => {
    const { config: _config, ...withoutConfig } = sessionBody();
    expect((await post(runner, "/v1/sessions", withoutConfig)).status).toBe(201);
    expect((await post(runner, "/v1/sessions", { ...sessionBody(), config: { somethingNew: { deep: [1] }, registryUrl: "" } })).status).toBe(201);
  });

  it("applies the backend's config gate", async () => {
    const { status, body } = await post(runner, "/v1/sessions", { ...sessionBody(), config: { image: "forbidden:image", pullPolicy: "missing" } });
    expect(status).toBe(400);
    expect(body).toEqual({ error: "invalid_config", message: expect.stringContaining("is not offered by this runner") });
  });

  it("refuses watch sessions and agents while watch is off", async () => {
    expect((await post(runner, "/v1/sessions", { ...sessionBody(), mode: "watch" })).body).toEqual({
      error: "watch_disabled",
      message: "this runner does not offer watch sessions (see /v1/capabilities)",
    });
    expect((await post(runner, "/v1/sessions", { ...sessionBody(), agent: "tool" })).body.error).toBe("agent_requires_watch");
  });

  it.each([
    [[{ name: "web", entryRelativePath: "a.yaml", ports: [{ port: 3000, protocol: "tcp" }] }, { name: "api", entryRelativePath: "b.yaml", ports: [{ port: 3000, protocol: "tcp" }] }], "port_conflict"],
    [[{ name: "Web_App", entryRelativePath: "a.yaml" }], "invalid_app_name"],
    [[{ name: "workspace", entryRelativePath: "a.yaml" }], "reserved_app_name"],
    [[{ name: "agent", entryRelativePath: "a.yaml" }], "reserved_app_name"],
    [[{ name: "web", entryRelativePath: "a.yaml" }, { name: "web", entryRelativePath: "b.yaml" }], "duplicate_app_name"],
    [[{ name: "web", entryRelativePath: "../a.yaml" }], "invalid_bundle"],
  ])("resolves apps and refuses %j", async (apps, error) => {
    const { status, body } = await post(runner, "/v1/sessions", { ...sessionBody(), apps });
    expect(status).toBe(400);
    expect(body.error).toBe(error);
    if (error === "port_conflict") {
      expect(body.message).toBe(
        "apps 'web' and 'api' both declare tcp port 3000; session hosts carry no app name, so the two would be indistinguishable",
      );
    }
  });

  it("lets tcp and udp share a port number", async () => {
    const apps = [
      { name: "web", entryRelativePath: "a.yaml", ports: [{ port: 3000, protocol: "tcp" }] },
      { name: "dns", entryRelativePath: "b.yaml", ports: [{ port: 3000, protocol: "udp" }] },
    ];
    expect((await post(runner, "/v1/sessions", { ...sessionBody(), apps })).status).toBe(201);
  });

  it("forwards TELO_REGISTRY_URL by precedence and never TELO_CACHE_DIR or the runner's env", async () => {
    const fromEnv = await runner.client.createSession(
      sessionBody({}, { env: { TELO_REGISTRY_URL: "https://from-env", TELO_CACHE_DIR: "/evil", OTHER: "kept" }, config: { image: "i", pullPolicy: "missing", registryUrl: "https://from-config" } }),
    );
    expect(await workloadEnvValue(runner.client, fromEnv.sessionId, "TELO_REGISTRY_URL")).toBe("https://from-env");
    expect(await workloadEnvValue(runner.client, fromEnv.sessionId, "TELO_CACHE_DIR")).toBe("<unset>");
    expect(await workloadEnvValue(runner.client, fromEnv.sessionId, "OTHER")).toBe("kept");
    expect(await workloadEnvValue(runner.client, fromEnv.sessionId, "RUNNER_SECRET_OF_THE_RUNNER")).toBe("<unset>");

    const fromConfig = await runner.client.createSession(sessionBody({}, { config: { image: "i", pullPolicy: "missing", registryUrl: "  https://from-config  " } }));
    expect(await workloadEnvValue(runner.client, fromConfig.sessionId, "TELO_REGISTRY_URL")).toBe("https://from-config");

    const blank = await runner.client.createSession(sessionBody({}, { config: { image: "i", pullPolicy: "missing", registryUrl: "   " } }));
    expect(await workloadEnvValue(runner.client, blank.sessionId, "TELO_REGISTRY_URL")).toBe("https://runner-default.example");
  });

  it("serves the apps door: catalog image, operator env wins, shared stream URL", async () => {
    const unknown = await post(runner, "/v1/apps/nope/sessions", {});
    expect(unknown).toMatchObject({
      status: 404,
      body: { error: "unknown_app", message: "app 'nope' is not offered by this runner — offered apps: tool (see /v1/capabilities)." },
    });
    const { status, body } = await post(runner, "/v1/apps/tool/sessions", { env: { TOKEN: "client", MINE: "client" } });
    expect(status).toBe(201);
    expect(body.streamUrl).toBe(`/v1/sessions/${body.sessionId}/events`);
    expect(await workloadEnvValue(runner.client, body.sessionId, "TOKEN")).toBe("operator");
    expect(await workloadEnvValue(runner.client, body.sessionId, "MINE")).toBe("client");
  });

  it("answers unknown routes with a JSON 404", async () => {
    const response = await fetch(`${runner.baseUrl}/v1/nope`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: "Route GET:/v1/nope not found", error: "Not Found", statusCode: 404 });
  });
});

describe("terms gate", () => {
  let runner: RunnerUnderTest;
  const body = "Be nice.\n";
  beforeAll(async () => {
    const file = join(tmpdir(), `terms-${process.pid}.md`);
    await writeFile(file, body);
    runner = await startRunner({ env: { RUNNER_TERMS_FILE: file, RUNNER_APPS: JSON.stringify({ tool: { image: "acme/tool:1" } }) } });
  });
  afterAll(() => runner.close());

  it("asks for the terms until the exact version is accepted", async () => {
    const { createHash } = await import("node:crypto");
    const version = createHash("sha256").update(body).digest("hex").slice(0, 12);
    const terms = { version, title: "Usage agreement", body };
    expect(await post(runner, "/v1/sessions", sessionBody())).toMatchObject({ status: 428, body: { error: "terms_required", terms } });
    expect((await post(runner, "/v1/sessions", sessionBody(), { "x-telo-accepted-terms": "stale" })).status).toBe(428);
    expect((await post(runner, "/v1/sessions", sessionBody(), { "x-telo-accepted-terms": version })).status).toBe(201);
    // Schema validation comes first, and an unknown app comes before the terms.
    expect((await post(runner, "/v1/sessions", { env: {} })).status).toBe(400);
    expect((await post(runner, "/v1/apps/nope/sessions", {})).status).toBe(404);
    expect((await post(runner, "/v1/apps/tool/sessions", {})).status).toBe(428);
    expect((await runner.client.capabilities()).terms).toEqual(terms);
  });
});
