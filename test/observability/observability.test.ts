/**
 * The pieces of logs and metrics that are pure: the line format, redaction, request ids, the
 * terminal rendering, LOG_LEVEL, the Kubernetes request labels, the start figures and the
 * merged exposition. (test/core/observability.test.ts drives them through both processes.)
 */
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { loadCoreConfig } from "../../src/config/core.ts";
import { createLogger } from "../../src/log.ts";
import { trackStart } from "../../src/metrics/figures.ts";
import { kubeRequestLabels } from "../../src/metrics/kube-client.ts";
import { MetricsSnapshotSchema } from "../../src/contract/responses.ts";
import { metricsSnapshot, renderExposition } from "../../src/metrics/registry.ts";
import { prettyLine } from "../../src/observability/pretty.ts";
import { requestIdFrom, withRequestId } from "../../src/observability/request-context.ts";
import { parseExposition, valueOf } from "../support/metrics.ts";

function capture(level = "debug") {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const log = createLogger("test", level, (line) => {
    raw.push(line);
    lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { log, lines, raw };
}

describe("log lines", () => {
  it("are one JSON object per line with level, ISO time, component, pid and message", () => {
    const { log, lines, raw } = capture();
    log.info("hello", { count: 2 });
    expect(raw).toHaveLength(1);
    expect(raw[0]!.endsWith("}\n")).toBe(true);
    expect(lines[0]).toEqual({ level: "info", time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), component: "test", pid: process.pid, count: 2, message: "hello" });
  });

  it("honour the level", () => {
    const { log, lines } = capture("warn");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    expect(lines.map((line) => line.level)).toEqual(["warn", "error"]);
    const silent = capture("silent");
    silent.log.error("nothing");
    expect(silent.lines).toEqual([]);
  });

  it("carry a child's bindings and the current request id", () => {
    const { log, lines } = capture();
    const session = log.child({ sessionId: "abc123" });
    withRequestId("req-1", () => session.info("inside"));
    session.info("outside");
    expect(lines[0]).toMatchObject({ sessionId: "abc123", requestId: "req-1", message: "inside" });
    expect(lines[1]).toMatchObject({ sessionId: "abc123", message: "outside" });
    expect(lines[1]).not.toHaveProperty("requestId");
  });

  it("never carry tokens, credentials, headers, env values, bundles or bodies, at any depth", () => {
    const { log, raw, lines } = capture();
    log.info("request", {
      token: "t-secret-1",
      headers: { authorization: "Bearer t-secret-2" },
      request: { env: { KEY: "t-secret-3" }, bundle: { files: [{ contents: "t-secret-4" }] }, config: { registryPassword: "t-secret-5" } },
      body: "t-secret-6",
      apiKey: "t-secret-7",
      app: "kept",
    });
    log.child({ accessToken: "t-secret-8" }).info("child");
    expect(raw.join("")).not.toMatch(/t-secret/);
    expect(lines[0]).toMatchObject({ token: "[redacted]", headers: "[redacted]", body: "[redacted]", app: "kept", request: { env: "[redacted]", bundle: "[redacted]", config: { registryPassword: "[redacted]" } } });
  });

  it("log an error by name, message and cause; a Kubernetes client error by its status only", () => {
    const { log, lines } = capture();
    log.warn("failed", { error: new Error("outer", { cause: new TypeError("inner") }) });
    log.warn("refused", { error: Object.assign(new Error("HTTP-Code: 403 Body: {…} Headers: {authorization: x}"), { code: 403 }) });
    expect(lines[0]!.error).toEqual({ name: "Error", message: "outer", cause: { name: "TypeError", message: "inner" } });
    expect(lines[1]!.error).toEqual({ name: "Error", httpStatus: 403 });
  });

  it("are rendered for a terminal as time, level, component, message and fields", () => {
    const line = '{"level":"warn","time":"2026-01-02T03:04:05.678Z","component":"api","pid":7,"requestId":"r1","status":503,"message":"request"}\n';
    expect(prettyLine(line, false)).toBe("03:04:05.678 WARN  api: request requestId=r1 status=503\n");
    expect(prettyLine(line, true)).toContain("\x1b[33mWARN \x1b[0m");
    expect(prettyLine("not json\n", false)).toBe("not json\n");
  });
});

describe("request ids", () => {
  it("keep a caller's plain id and replace anything else with a fresh one", () => {
    expect(requestIdFrom("abc-123.x:y_z")).toBe("abc-123.x:y_z");
    for (const bad of [undefined, "", "two words", "x".repeat(65), 'quote"', "line\nbreak", ["a", "b"]]) {
      expect(requestIdFrom(bad)).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe("LOG_LEVEL", () => {
  it("is one of debug, info, warn, error, silent (any case); anything else refuses startup", () => {
    expect(loadCoreConfig({}).logLevel).toBe("info");
    expect(loadCoreConfig({ LOG_LEVEL: " DEBUG " }).logLevel).toBe("debug");
    expect(() => loadCoreConfig({ LOG_LEVEL: "verbose" })).toThrow("LOG_LEVEL must be one of debug, info, warn, error, silent, got 'verbose'.");
  });
});

describe("Kubernetes request labels", () => {
  it.each([
    ["GET", "https://k/api/v1/namespaces/s/pods/p1", "get", "pods"],
    ["GET", "https://k/api/v1/namespaces/s/pods?labelSelector=a", "list", "pods"],
    ["GET", "https://k/api/v1/namespaces/s/pods?watch=true", "watch", "pods"],
    ["GET", "https://k/api/v1/namespaces/s/pods/p1/log?container=c", "get", "pods/log"],
    ["POST", "https://k/api/v1/namespaces/s/services", "create", "services"],
    ["DELETE", "https://k/apis/batch/v1/namespaces/b/jobs/j", "delete", "jobs"],
    ["DELETE", "https://k/api/v1/namespaces/s/configmaps", "deletecollection", "configmaps"],
    ["PATCH", "https://k/apis/gateway.networking.k8s.io/v1/namespaces/s/httproutes/r", "patch", "httproutes"],
    ["PUT", "https://k/api/v1/namespaces/s/pods/p/status", "update", "pods/status"],
    ["GET", "https://k/api/v1/namespaces/telo-sessions", "get", "namespaces"],
    ["GET", "https://k/apis", "list", "discovery"],
    ["GET", "https://k/apis/networking.k8s.io/v1", "list", "discovery"],
  ])("%s %s is %s %s", (method, url, verb, resource) => {
    expect(kubeRequestLabels(method, url)).toEqual({ verb, resource });
  });
});

describe("figures", () => {
  it("time a launch to each stage once and count its outcome once", async () => {
    let clock = 1_000;
    const start = trackStart("run", () => clock);
    clock += 500;
    start.stage("provision");
    clock += 500;
    start.stage("provision");
    start.status("starting");
    clock += 1_000;
    start.status("running");
    start.status("exited");
    const samples = parseExposition((await renderExposition([await metricsSnapshot()])).text);
    expect(valueOf(samples, "runner_session_start_seconds_sum", { mode: "run", stage: "provision" })).toBe(0.5);
    expect(valueOf(samples, "runner_session_start_seconds_sum", { mode: "run", stage: "running" })).toBe(2);
    expect(valueOf(samples, "runner_session_starts_total", { mode: "run", outcome: "running" })).toBe(1);
    expect(valueOf(samples, "runner_session_starts_total", { mode: "run", outcome: "exited" })).toBe(0);
  });

  it("merge processes' snapshots into one family per name, every series kept", async () => {
    const family = (process: string, value: number | null) => ({
      name: "runner_demo",
      help: "A demo figure.",
      type: "gauge",
      values: [{ value, labels: { process } }],
      aggregator: "omit",
    });
    const snapshots = [v.parse(MetricsSnapshotSchema, [family("api", 1)]), v.parse(MetricsSnapshotSchema, JSON.parse(JSON.stringify([family("supervisor", null)])))];
    const { contentType, text } = await renderExposition(snapshots);
    expect(contentType).toMatch(/^text\/plain/);
    expect(text.match(/# TYPE runner_demo gauge/g)).toHaveLength(1);
    expect(text).toContain('runner_demo{process="api"} 1');
    // JSON carried the supervisor's NaN as null; prom-client spells it Nan, which Prometheus reads case-insensitively.
    expect(text).toContain('runner_demo{process="supervisor"} Nan');
  });
});
