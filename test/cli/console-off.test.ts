/** Without RUNNER_CONSOLE=true the console and the session list do not exist, and the CLI says how to get them. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunnerUnderTest, startRunner } from "../support/processes.ts";
import { runCli } from "./cli-process.ts";

let runner: RunnerUnderTest;

beforeAll(async () => {
  runner = await startRunner();
});

afterAll(async () => {
  await runner?.close();
});

it("serves no console and no session list by default", async () => {
  for (const path of ["/console", "/console/assets/console.js", "/console/api/sessions"]) {
    const response = await fetch(`${runner.baseUrl}${path}`);
    expect(response.status, path).toBe(404);
    expect(await response.json()).toMatchObject({ statusCode: 404 });
  }
  const result = await runCli(["sessions"], { url: runner.baseUrl });
  expect(result).toMatchObject({
    code: 1,
    stderr: "k8s-runner: runner returned HTTP 404: this runner does not list its sessions (start it with RUNNER_CONSOLE=true)\n",
  });
});
