/**
 * Generated bad input (docs/operating.md "Threat model"), through the real servers: request bodies, raw bodies and
 * content types, ids, queries and headers, WebSocket frames, internal-socket messages and frames,
 * bundle paths and archives. Every answer is a documented 4xx (or a success), every close a
 * documented code; neither process ever answers 5xx, crashes or hangs, and a 201 is a session
 * that exists. Thousands of cases per run; a failure prints fast-check's seed to replay it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normaliseRelativePath } from "../../src/contract/paths.ts";
import { INTERNAL_PROTOCOL_VERSION, PROTOCOL_HEADER } from "../../src/internal/protocol.ts";
import { tarArchive } from "../../src/kube/bundle/bundle-archive.ts";
import { InternalH2 } from "../support/internal-h2.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { type Processes, openSocket, startProcesses } from "./support.ts";
import { sessionBody } from "../support/session-body.ts";

/** Statuses the contract documents for bad input (and the successes of good input). */
const DOCUMENTED = new Set([200, 201, 202, 204, 400, 401, 403, 404, 409, 413, 415, 422, 428, 429]);
/** Close codes a terminal may end with (docs/api.md "Terminal (WebSocket)"). */
const CLOSE_CODES = new Set([1000, 1005, 1009, 4403, 4404, 4410]);

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", ".", "..", "./", "../x", "a/../../x", "..\u0000", "telo.yaml\u0000.bak", "/", "//a", "a/", "x".repeat(300), "é".repeat(80)),
);
const junk: fc.Arbitrary<unknown> = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(text, { maxLength: 3 }),
  fc.dictionary(text, text, { maxKeys: 3 }),
);
const maybe = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: junk });

const file = fc.record({
  relativePath: maybe(text),
  contents: maybe(fc.oneof(fc.string({ maxLength: 64 }), fc.base64String({ maxLength: 64 }))),
  encoding: fc.option(maybe(fc.constantFrom("utf8", "base64")), { nil: undefined }),
});
const createBody = fc.record(
  {
    bundle: maybe(fc.record({ entryRelativePath: maybe(text), files: maybe(fc.array(file, { maxLength: 4 })) })),
    env: maybe(fc.dictionary(text, maybe(fc.string({ maxLength: 16 })), { maxKeys: 4 })),
    config: maybe(
      fc.record({
        image: maybe(fc.constantFrom("telorun/node:test", "")),
        pullPolicy: maybe(fc.constantFrom("missing", "always", "never")),
        registryUrl: fc.option(maybe(text), { nil: undefined }),
        script: fc.constant({}),
      }),
    ),
    ports: fc.option(maybe(fc.array(fc.record({ port: maybe(fc.integer({ min: -5, max: 70_000 })), protocol: maybe(fc.constantFrom("tcp", "udp")) }), { maxLength: 3 })), { nil: undefined }),
    inspect: fc.option(junk, { nil: undefined }),
    mode: fc.option(maybe(fc.constantFrom("run", "watch")), { nil: undefined }),
    apps: fc.option(junk, { nil: undefined }),
  },
  { requiredKeys: [] },
);

describe("generated bad input", { timeout: 600_000 }, () => {
  let runner: Processes;
  const created: string[] = [];
  beforeAll(async () => {
    runner = await startProcesses({ RUNNER_MAX_SESSIONS: "64", RUNNER_EXIT_TTL_MS: "1000" });
  });
  afterAll(async () => {
    // Neither process died along the way.
    expect(runner.api().exitCode).toBeNull();
    expect(runner.supervisor().exitCode).toBeNull();
    await runner.close();
  });

  async function expectDocumented(response: Response): Promise<unknown> {
    const body = await response.text();
    expect(DOCUMENTED, `${response.status} ${body}`).toContain(response.status);
    return body === "" ? undefined : JSON.parse(body);
  }

  it("answers every create body with a documented status; a 201 is a session that exists", async () => {
    await fc.assert(
      fc.asyncProperty(createBody, async (body) => {
        const response = await fetch(`${runner.baseUrl}/v1/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        const answer = (await expectDocumented(response)) as { sessionId?: string };
        if (response.status === 201) {
          expect((await fetch(`${runner.baseUrl}/v1/sessions/${answer.sessionId}`)).status).toBe(200);
          expect((await fetch(`${runner.baseUrl}/v1/sessions/${answer.sessionId}`, { method: "DELETE" })).status).toBe(204);
          created.push(answer.sessionId!);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it("answers raw bodies and content types on every body route with a documented status", async () => {
    const route = fc.constantFrom("/v1/sessions", "/v1/probe", "/v1/apps/hello/sessions", "/v1/sessions/aaaaaaaaaaaa/workspace", "/v1/sessions/aaaaaaaaaaaa/reload");
    const contentType = fc.option(fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "application/merge-patch+json", "", "json"), { nil: undefined });
    const raw = fc.oneof(fc.string({ maxLength: 200 }), fc.json(), fc.constantFrom("{", "[]", "null", "1", '"x"', "{}", `${"[".repeat(5000)}${"]".repeat(5000)}`, `{"a":${"{\"a\":".repeat(3000)}1${"}".repeat(3001)}`));
    await fc.assert(
      fc.asyncProperty(route, contentType, raw, async (path, type, body) => {
        const response = await fetch(`${runner.baseUrl}${path}`, { method: "POST", headers: type === undefined ? {} : { "content-type": type }, body });
        await expectDocumented(response);
      }),
      { numRuns: 800 },
    );
  });

  it("answers any id, cursor and header on the read routes with a documented status", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const id = fc.oneof(fc.constant(sessionId), fc.string({ maxLength: 30 }), fc.string({ unit: "binary", maxLength: 12 }));
    const cursor = fc.oneof(fc.string({ maxLength: 12 }), fc.integer().map(String), fc.constantFrom("-1", "1e3", "18446744073709551616", " 3 "));
    const headerValue = fc.string({ maxLength: 40 }).map((value) => value.replace(/[^\x20-\x7e]/g, ""));
    await fc.assert(
      fc.asyncProperty(id, cursor, headerValue, fc.constantFrom("", "/workspace", "/workspace/file", "/events"), async (target, after, header, suffix) => {
        const abort = new AbortController();
        const response = await fetch(`${runner.baseUrl}/v1/sessions/${encodeURIComponent(target)}${suffix}?lastEventId=${encodeURIComponent(after)}&path=${encodeURIComponent(after)}`, {
          headers: { "last-event-id": header, "x-telo-accepted-terms": header, origin: header === "" ? "http://x" : header },
          signal: abort.signal,
        });
        expect(DOCUMENTED, `${response.status}`).toContain(response.status);
        abort.abort();
      }),
      { numRuns: 600 },
    );
  });

  it("closes a terminal fed arbitrary frames only with a documented code, and keeps both processes up", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const frame = fc.oneof(
      fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ maxLength: 64 }),
      fc.json(),
      fc.record({ type: fc.constantFrom("resize", "stdin", "x"), cols: junk, rows: junk }).map((control) => JSON.stringify(control)),
      fc.constant(Buffer.alloc(1024 * 1024 + 1)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 8 }), async (frames) => {
        const { socket, closed } = await openSocket(`ws://127.0.0.1:${runner.port}/v1/sessions/${sessionId}/io`);
        for (const data of frames) if (socket.readyState === socket.OPEN) socket.send(data);
        if (socket.readyState === socket.OPEN) socket.close(1000);
        const { code } = await closed;
        expect(CLOSE_CODES, `close ${code}`).toContain(code);
      }),
      { numRuns: 150 },
    );
    expect((await fetch(`${runner.baseUrl}/v1/ready`)).status).toBe(200);
    await runner.client.deleteSession(sessionId);
  });

  it("answers arbitrary internal-socket messages without a 5xx, and survives arbitrary terminal frames", async () => {
    const internal = new InternalH2({ socketPath: runner.env.RUNNER_INTERNAL_SOCKET! });
    const path = fc.constantFrom("/internal/sessions", "/internal/probe", "/internal/apps/x/sessions", "/internal/sessions/abc/workspace", "/internal/sessions/abc/apps", "/internal/nope");
    await fc.assert(
      fc.asyncProperty(path, fc.constantFrom("POST", "PUT", "GET", "DELETE"), fc.oneof(fc.json(), fc.string({ maxLength: 100 }), createBody.map((request) => JSON.stringify({ request }))), fc.boolean(), async (target, method, body, versioned) => {
        const response = await internal.request(method, target, versioned ? { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION } : {}, method === "GET" ? undefined : body);
        expect(response.status, response.text).toBeLessThan(500);
        const sessionId = response.status === 201 ? (JSON.parse(response.text) as { sessionId: string }).sessionId : undefined;
        if (sessionId) await internal.request("DELETE", `/internal/sessions/${sessionId}`, { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION });
      }),
      { numRuns: 800 },
    );
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    // The socket's other door: arbitrary first bytes (told apart from HTTP/2's preface by them),
    // and arbitrary bytes after a terminal's upgrade.
    const upgrade = [
      `GET /internal/sessions/${sessionId}/io HTTP/1.1`,
      "host: supervisor",
      "connection: Upgrade",
      "upgrade: websocket",
      "sec-websocket-version: 13",
      "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==",
      `${PROTOCOL_HEADER}: ${INTERNAL_PROTOCOL_VERSION}`,
      "",
      "",
    ].join("\r\n");
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 6 }), async (upgraded, chunks) => {
        const socket = connect(runner.env.RUNNER_INTERNAL_SOCKET!);
        socket.on("error", () => undefined);
        await new Promise((resolve) => socket.once("connect", resolve));
        if (upgraded) socket.write(upgrade);
        for (const chunk of chunks) socket.write(chunk);
        await new Promise((resolve) => setTimeout(resolve, 5));
        socket.destroy();
      }),
      { numRuns: 200 },
    );
    await internal.close();
    expect((await fetch(`${runner.baseUrl}/v1/ready`)).status).toBe(200);
    expect((await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}`)).status).toBe(200);
    await runner.client.deleteSession(sessionId);
  });
});

describe("generated bundle paths and archives", () => {
  it("the path guard's output never climbs out, holds a NUL, names a directory or starts at the root", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.array(fc.constantFrom("a", "..", ".", "", "/", "\u0000", "é"), { maxLength: 8 }).map((parts) => parts.join("/"))), (path) => {
        const normalised = normaliseRelativePath(path);
        if (normalised === undefined) return;
        expect(normalised).not.toMatch(/\u0000|^\/|\/$|^\.\.?$/);
        expect(normalised.split("/")).not.toContain("..");
      }),
      { numRuns: 5000 },
    );
  });

  it("a real tar unpacks any accepted bundle to exactly its normalised paths", () => {
    const dir = mkdtempSync(join(tmpdir(), "bundle-property-"));
    try {
      const segment = fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).filter((part) => !part.includes("/") && !part.includes("\u0000") && part !== "." && part !== "..");
      const path = fc.array(segment, { minLength: 1, maxLength: 6 }).map((parts) => parts.join("/"));
      // A file cannot also be a directory of another file.
      const noFileIsADirectory = (paths: string[]) => paths.every((a) => paths.every((b) => a === b || !b.startsWith(`${a}/`)));
      let run = 0;
      fc.assert(
        fc.property(fc.uniqueArray(path, { minLength: 1, maxLength: 4 }).filter(noFileIsADirectory), (paths) => {
          const out = join(dir, String((run += 1)));
          execFileSync("mkdir", [out]);
          writeFileSync(join(out, "..", `${run}.tar`), tarArchive(paths.map((relativePath) => ({ relativePath, contents: relativePath }))));
          execFileSync("tar", ["xf", join(out, "..", `${run}.tar`), "-C", out]);
          for (const relativePath of paths) expect(readFileSync(join(out, normaliseRelativePath(relativePath)!), "utf8")).toBe(relativePath);
        }),
        { numRuns: 100 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
