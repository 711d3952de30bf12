import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { HumanSink, routeLine } from "../../src/cli/output.ts";

describe("route events in the CLI", () => {
  it("names host, app and port, the state and the reason", () => {
    expect(routeLine({ type: "route", app: "web", host: "3000-abc.example.test", port: 3000, state: "unprogrammed", reason: "NotAllowedByListeners" })).toBe(
      "route 3000-abc.example.test (web:3000) unprogrammed: NotAllowedByListeners",
    );
    expect(routeLine({ type: "route", host: "7000-abc.example.test", port: 7000, state: "programmed" })).toBe("route 7000-abc.example.test (agent:7000) programmed");
  });

  it("prints a route's changes on stderr, not its publication", () => {
    const stdout = new PassThrough();
    const stderr = Object.assign(new PassThrough(), { isTTY: false });
    const sink = new HumanSink({ stdout, stderr: stderr as never });
    sink.event(1, { type: "route", app: "app", host: "h", port: 3000, state: "pending" });
    sink.event(2, { type: "route", app: "app", host: "h", port: 3000, state: "programmed" });
    expect(String(stderr.read())).toBe("k8s-runner: route h (app:3000) programmed\n");
  });
});
