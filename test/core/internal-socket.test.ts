/**
 * The supervisor's internal socket refuses what no route takes with a clear answer, and keeps
 * serving: a wrong protocol version, an unknown route, a body that is not JSON or not valid.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTERNAL_PROTOCOL_VERSION, PROTOCOL_HEADER } from "../../src/internal/protocol.ts";
import { InternalH2 } from "../support/internal-h2.ts";
import { type RunnerUnderTest, startRunner } from "../support/processes.ts";

describe("the internal socket", () => {
  let runner: RunnerUnderTest;
  let internal: InternalH2;
  beforeAll(async () => {
    runner = await startRunner();
    internal = new InternalH2({ socketPath: runner.socketPath });
  });
  afterAll(async () => {
    await internal.close();
    await runner.close();
  });

  async function send(method: "GET" | "POST", path: string, body?: string, version = INTERNAL_PROTOCOL_VERSION) {
    const headers = { [PROTOCOL_HEADER]: version, ...(body !== undefined && { "content-type": "application/json" }) };
    const answer = await internal.request(method, path, headers, body);
    return { status: answer.status, body: JSON.parse(answer.text) as unknown };
  }

  it("answers each refusal with a status and an error code", async () => {
    expect(await send("GET", "/internal/capabilities", undefined, "0")).toEqual({
      status: 400,
      body: { error: "internal_protocol_mismatch", message: `the supervisor speaks internal protocol ${INTERNAL_PROTOCOL_VERSION}` },
    });
    expect(await send("GET", "/internal/nothing")).toEqual({
      status: 404,
      body: { error: "no_such_internal_route", message: "GET /internal/nothing" },
    });
    expect(await send("POST", "/internal/probe", "{not json")).toEqual({
      status: 400,
      body: { error: "bad_internal_message", message: "internal message is not JSON" },
    });
    expect(await send("POST", "/internal/probe", JSON.stringify({ config: "not an object" }))).toMatchObject({
      status: 400,
      body: { error: "bad_internal_message", message: expect.stringMatching(/^invalid internal message: /) },
    });
    expect(await send("GET", "/internal/sessions/%E0%A4%A")).toEqual({
      status: 404,
      body: { error: "not_found", message: "session '%E0%A4%A' not in registry" },
    });
    // Still serving.
    expect((await runner.client.health()).ok).toBe(true);
    expect((await send("GET", "/internal/capabilities")).status).toBe(200);
  });
});
