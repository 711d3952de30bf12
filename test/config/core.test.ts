import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseAppsCatalog } from "../../src/config/apps-catalog.ts";
import { loadCoreConfig } from "../../src/config/core.ts";

describe("core config", () => {
  it("has the contract's defaults", () => {
    const config = loadCoreConfig({});
    expect(config).toMatchObject({
      port: 8062,
      maxSessions: 32,
      exitTtlMs: 14_400_000,
      replayBufferBytes: 5_000_000,
      corsOrigins: undefined,
      watch: { enabled: false, idleMs: 300_000, maxTtlSeconds: 21_600, maxSessions: 8, reloadLimit: 30, suspendedTtlMs: 86_400_000, checkpointMs: 30_000 },
      terms: undefined,
      defaultRegistryUrl: undefined,
    });
    expect(config.apps.size).toBe(0);
  });

  it.each([
    [{ PORT: "" }, "PORT must be an integer in 1..65535, got ''."],
    [{ PORT: "70000" }, "PORT must be an integer in 1..65535, got '70000'."],
    [{ RUNNER_MAX_SESSIONS: "0" }, "RUNNER_MAX_SESSIONS must be a positive integer, got '0'."],
    [{ RUNNER_WATCH_SESSIONS: "maybe" }, "RUNNER_WATCH_SESSIONS must be a boolean (true/false), got 'maybe'."],
    [{ RUNNER_TERMS_FILE: "/no/such/file" }, "RUNNER_TERMS_FILE '/no/such/file' could not be read: ENOENT"],
  ])("refuses %j", (env, message) => expect(() => loadCoreConfig(env)).toThrow(message));

  it("reads booleans, origins and terms", () => {
    const config = loadCoreConfig({
      RUNNER_WATCH_SESSIONS: "YES",
      RUNNER_CORS_ORIGINS: " https://a.example, ,https://b.example ",
      RUNNER_TERMS_BODY: "terms text",
      RUNNER_TERMS_TITLE: "  Title  ",
    });
    expect(config.watch.enabled).toBe(true);
    expect(config.corsOrigins).toEqual(["https://a.example", "https://b.example"]);
    expect(config.terms).toEqual({ version: createHash("sha256").update("terms text").digest("hex").slice(0, 12), title: "Title", body: "terms text" });
    expect(loadCoreConfig({ RUNNER_TERMS_BODY: "   " }).terms).toBeUndefined();
  });
});

describe("RUNNER_APPS", () => {
  it("resolves defaults and keeps declaration order; __proto__ is an ordinary name", () => {
    const catalog = parseAppsCatalog('{"b": {"image": "b"}, "__proto__": {"image": "p", "port": 80}}');
    expect([...catalog.keys()]).toEqual(["b", "__proto__"]);
    expect(catalog.get("b")).toEqual({ name: "b", image: "b", env: {}, pullPolicy: "missing" });
  });

  it("reads a tokenEnv", () => {
    expect(parseAppsCatalog('{"a": {"image": "x", "tokenEnv": "APP_TOKEN"}}').get("a")?.tokenEnv).toBe("APP_TOKEN");
  });

  it.each([
    ["{", "RUNNER_APPS is not valid JSON"],
    ["[]", "RUNNER_APPS must be a JSON object mapping app names to entries."],
    ['{"": {"image": "x"}}', "RUNNER_APPS has an entry with an empty name."],
    ['{"a": 1}', "RUNNER_APPS entry 'a' must be an object."],
    ['{"a": {}}', "RUNNER_APPS entry 'a' needs a non-empty string 'image'."],
    ['{"a": {"image": "x", "env": {"K": 1}}}', "RUNNER_APPS entry 'a' has an invalid 'env'"],
    ['{"a": {"image": "x", "pullPolicy": "sometimes"}}', "RUNNER_APPS entry 'a' has an invalid 'pullPolicy'"],
    ['{"a": {"image": "x", "port": "8080"}}', "RUNNER_APPS entry 'a' has an invalid 'port' — expected an integer in 1..65535."],
    ['{"a": {"image": "x", "port": 8080.5}}', "has an invalid 'port'"],
    ['{"a": {"image": "x", "port": 65536}}', "has an invalid 'port'"],
    ['{"a": {"image": "x", "title": 3}}', "has an invalid 'title'"],
    ['{"a": {"image": "x", "tokenEnv": ""}}', "RUNNER_APPS entry 'a' has an invalid 'tokenEnv' — expected an environment variable name"],
    ['{"a": {"image": "x", "tokenEnv": "9LIVES"}}', "has an invalid 'tokenEnv'"],
    ['{"a": {"image": "x", "tokenEnv": "A=B"}}', "has an invalid 'tokenEnv'"],
    ['{"a": {"image": "x", "tokenEnv": true}}', "has an invalid 'tokenEnv'"],
  ])("refuses %s", (raw, message) => expect(() => parseAppsCatalog(raw)).toThrow(message));
});
