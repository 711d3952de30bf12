import { describe, expect, it } from "vitest";
import { Problem, problemAnswer } from "../../src/contract/problem.ts";
import { INTERNAL_PREFIX, V1_PREFIX, accessPattern, findRoute, matchPath, pathOf, queryOf, routes } from "../../src/contract/routes.ts";

describe("the route table", () => {
  it("builds a route's path with each parameter encoded, and matches it back decoded", () => {
    const path = pathOf(V1_PREFIX, routes.workspaceFile, { id: "a/b c" });
    expect(path).toBe("/v1/sessions/a%2Fb%20c/workspace/file");
    expect(matchPath(V1_PREFIX, routes.workspaceFile, path)).toEqual({ id: "a/b c" });
  });

  it("matches whole segments only, and never an empty parameter", () => {
    expect(matchPath(INTERNAL_PREFIX, routes.getSession, "/internal/sessions/abc")).toEqual({ id: "abc" });
    expect(matchPath(INTERNAL_PREFIX, routes.getSession, "/internal/sessions/")).toBeUndefined();
    expect(matchPath(INTERNAL_PREFIX, routes.getSession, "/internal/sessions/abc/events")).toBeUndefined();
    expect(matchPath(INTERNAL_PREFIX, routes.getSession, "/v1/sessions/abc")).toBeUndefined();
  });

  it("keeps a malformed percent-encoding as it came instead of throwing", () => {
    expect(matchPath(INTERNAL_PREFIX, routes.getSession, "/internal/sessions/%E0%A4%A")).toEqual({ id: "%E0%A4%A" });
  });

  it("finds a route by method, path and kind", () => {
    expect(findRoute(INTERNAL_PREFIX, "DELETE", "/internal/sessions/x", ["relayed"])).toEqual(["deleteSession", { id: "x" }]);
    expect(findRoute(INTERNAL_PREFIX, "GET", "/internal/sessions/x/events", ["relayed"])).toBeUndefined();
    expect(findRoute(INTERNAL_PREFIX, "GET", "/internal/health", ["relayed", "internal", "events"])).toBeUndefined();
  });

  it("passes on only the route's own query parameters, empty values included", () => {
    expect(queryOf(routes.reload, { app: "", other: "x" })).toBe("?app=");
    expect(queryOf(routes.reload, { app: undefined })).toBe("");
    expect(queryOf(routes.getSession, { app: "web" })).toBe("");
  });
});

describe("the route table's access classes", () => {
  it("names the open, stream and session-creating paths, at the end of a possibly prefixed path", () => {
    const open = accessPattern("open");
    expect(["/v1/health", "/v1/ready", "/runner/v1/health"].every((path) => open.test(path))).toBe(true);
    expect(["/v1/sessions", "/v1/health/x", "/v1/openapi.json"].some((path) => open.test(path))).toBe(false);
    const stream = accessPattern("stream");
    expect(["/v1/sessions/s-1/events", "/v1/sessions/s-1/io"].every((path) => stream.test(path))).toBe(true);
    expect(["/v1/sessions/s-1", "/v1/sessions//events", "/v1/sessions/a/b/io"].some((path) => stream.test(path))).toBe(false);
    const creates = accessPattern("creates");
    expect(["/v1/sessions", "/v1/apps/hello/sessions"].every((path) => creates.test(path))).toBe(true);
    expect(["/v1/sessions/s-1", "/v1/apps//sessions", "/v1/probe"].some((path) => creates.test(path))).toBe(false);
  });
});

describe("problemAnswer", () => {
  it("maps each kind to its status, and the 428's terms stand in for the message", () => {
    expect(problemAnswer(new Problem("conflict", "too_many_sessions", "full"))).toEqual({ status: 409, body: { error: "too_many_sessions", message: "full" } });
    expect(problemAnswer(new Problem("rate_limited", "reload_rate_limited", "slow down")).status).toBe(429);
    const terms = { version: "1", title: "T", body: "B" };
    expect(problemAnswer(new Problem("terms_required", "terms_required", "accept", { terms }))).toEqual({
      status: 428,
      body: { error: "terms_required", terms },
    });
    expect(problemAnswer(new Problem("internal", "internal", "boom"))).toEqual({
      status: 500,
      body: { statusCode: 500, error: "Internal Server Error", message: "boom" },
    });
  });
});
