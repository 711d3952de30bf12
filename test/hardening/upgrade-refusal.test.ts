/**
 * Terminal upgrades are taken by the api's own server before Hono (src/api/upgrade.ts); a
 * refused one must still get the routes' whole answer: status, `www-authenticate`, JSON body.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunnerUnderTest, startRunner } from "../support/processes.ts";

const TOKEN = "an-api-token-for-the-upgrade-test";

function upgrade(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    outgoing.on("upgrade", () => reject(new Error("upgraded without a token")));
    outgoing.on("response", (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("a refused terminal upgrade", () => {
  let runner: RunnerUnderTest;
  beforeAll(async () => {
    runner = await startRunner({ env: { RUNNER_API_TOKEN: TOKEN } });
  });
  afterAll(() => runner.close());

  it("is answered 401 with www-authenticate and the JSON error body", async () => {
    const answer = await upgrade(`${runner.directUrl}/v1/sessions/abc/io`);
    expect(answer.status).toBe(401);
    expect(answer.headers["www-authenticate"]).toBe('Bearer realm="k8s-runner"');
    expect(JSON.parse(answer.body)).toMatchObject({ error: "unauthorized" });
    // The process goes on serving.
    expect((await fetch(`${runner.directUrl}/v1/health`)).status).toBe(200);
  });
});
