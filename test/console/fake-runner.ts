/**
 * A runner made of canned answers, for checking the console's rendering in Chromium without a
 * runner: the console's own files from the source tree, the capabilities, a session list, and
 * per session one finite event stream. The terminal's socket is closed as a finished session's is.
 */
import { readFile } from "node:fs/promises";
import type { Page, Route } from "playwright-core";
import { CONSOLE_ASSETS, CONSOLE_PAGE } from "../../src/console/assets.ts";

export const FAKE_ORIGIN = "http://console.test";
/** The id every create is answered with. */
export const CREATED_ID = "created00000";

export type FakeRunner = {
  sessions: Record<string, unknown>[];
  events: Record<string, Record<string, unknown>[]>;
  /** The capabilities document; absent: a runner with no versions, image, catalog or terms. */
  capabilities?: Record<string, unknown>;
  /** Each create request the page sent (POST …/sessions), answered 201 with session `created`'s id. */
  creates?: { path: string; body: unknown; headers: Record<string, string> }[];
};

const sse = (events: Record<string, unknown>[]) => events.map((event, index) => `id: ${index + 1}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");

async function answer(route: Route, fake: FakeRunner, served: Set<string>): Promise<void> {
  const path = new URL(route.request().url()).pathname;
  const asset = path.startsWith("/console/assets/") ? CONSOLE_ASSETS[path.slice("/console/assets/".length)] : path === "/console" ? CONSOLE_PAGE : undefined;
  if (asset) return route.fulfill({ body: await readFile(asset.path), contentType: asset.contentType });
  if (path === "/v1/capabilities") {
    return route.fulfill({ json: fake.capabilities ?? { displayName: "fake", config: { schema: {} }, features: { io: ["tty"], ports: true, watch: false } } });
  }
  if (route.request().method() === "POST" && path.endsWith("/sessions")) {
    fake.creates?.push({ path, body: route.request().postDataJSON(), headers: await route.request().allHeaders() });
    return route.fulfill({ status: 201, json: { sessionId: CREATED_ID, streamUrl: `/v1/sessions/${CREATED_ID}/events`, createdAt: new Date().toISOString() } });
  }
  if (path === "/console/api/sessions") return route.fulfill({ json: { sessions: fake.sessions } });
  const stream = /^\/v1\/sessions\/([^/]+)\/events$/.exec(path);
  if (stream) {
    // An EventSource reconnects when a stream ends, and interception does not show it the
    // Last-Event-ID it sends: a stream is served once, then 204 tells it to stop.
    if (served.has(stream[1]!)) return route.fulfill({ status: 204 });
    served.add(stream[1]!);
    return route.fulfill({ contentType: "text/event-stream", body: sse(fake.events[stream[1]!] ?? []) });
  }
  return route.fulfill({ status: 404, json: { error: "not_found", message: path } });
}

/** Opens the console in `page` against `fake`. */
export async function openFakeConsole(page: Page, fake: FakeRunner): Promise<void> {
  const served = new Set<string>();
  await page.route(`${FAKE_ORIGIN}/**`, (route) => answer(route, fake, served));
  await page.routeWebSocket(/\/io\b/, (socket) => socket.close({ code: 4410, reason: "session ended" }));
  await page.goto(`${FAKE_ORIGIN}/console`);
}
