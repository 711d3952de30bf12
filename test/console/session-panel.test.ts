/**
 * A session's panel (src/console/assets/session-panel.js, endpoints.js) in a real Chromium
 * against a faked runner (fake-runner.ts) whose event stream carries what a live simulated
 * cluster does not show at once: an agent's routed port, a port added and one removed on a
 * reload, a rejected one, a route that failed, and the kernel's version for two apps.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium } from "../support/chromium.ts";
import { openFakeConsole } from "./fake-runner.ts";

const ID = "cccccccccccc";
const host = (port: number) => `${port}-${ID}.sessions.example.test`;
const endpoint = (port: number) => ({ host: host(port), port, protocol: "tcp", url: `https://${host(port)}` });

const EVENTS = [
  { type: "progress", phase: "provision", message: "Scheduling" },
  {
    type: "status",
    status: { kind: "running", endpoints: [endpoint(3000), endpoint(4000), { host: "", port: 5353, protocol: "udp" }], agent: endpoint(7000) },
  },
  { type: "route", app: "web", host: host(3000), port: 3000, state: "programmed" },
  { type: "route", app: "api", host: host(4000), port: 4000, state: "unprogrammed", reason: "no gateway accepted it" },
  { type: "route", host: host(7000), port: 7000, state: "pending" },
  { type: "reachability", app: "web", port: 3000, state: "reachable" },
  { type: "run", app: "web", generation: 1, phase: "started", trigger: "initial", telo: "0.97.0" },
  { type: "run", app: "api", generation: 1, phase: "started", trigger: "initial", telo: "0.96.1" },
  { type: "debug", app: "web", frame: { kind: "event", event: "Kernel.Started" } },
  { type: "endpoints", app: "api", added: [endpoint(4100)], removed: [endpoint(4000)], rejected: [{ port: 3000, reason: "app 'web' declares it" }] },
];

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  page = await browser.context.newPage();
  const session = { sessionId: ID, status: { kind: "running" }, mode: "watch", apps: [], createdAt: new Date().toISOString() };
  await openFakeConsole(page, { sessions: [session], events: { [ID]: EVENTS } });
  await page.getByRole("button", { name: `Open session ${ID}` }).click();
  await page.locator(".events li").nth(EVENTS.length - 1).waitFor();
});

afterAll(() => browser?.close());

describe("a session's panel", () => {
  it("merges endpoints, routes, reachability and endpoint changes into one row per port", async () => {
    const rows = page.locator(".endpoints tbody tr");
    const table = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
    expect(table).toEqual([
      ["tcp/3000", "web", "programmed", "reachable", `https://${host(3000)}`],
      ["udp/5353", "app", "—", "—", "not routed"],
      ["tcp/7000", "agent", "pending", "—", `https://${host(7000)}`],
      ["tcp/4100", "api", "—", "—", `https://${host(4100)}`],
      ["3000", "api", "—", "—", "rejected: app 'web' declares it"],
    ]);
    expect(await page.locator('.endpoints a[href^="https://3000-"]').getAttribute("target")).toBe("_blank");
  });

  it("shows every kernel version reported, and each event as a numbered line, debug frames included", async () => {
    expect(await page.locator(".telo").textContent()).toBe("0.97.0, 0.96.1");
    expect(await page.locator(".telo").getAttribute("class")).not.toContain("warning");
    const lines = await page.locator(".events li").allTextContents();
    expect(lines).toHaveLength(EVENTS.length);
    expect(lines).toContain("debug web Kernel.Started");
    expect(lines).toContain(`route ${host(4000)} (api:4000) unprogrammed: no gateway accepted it`);
    expect(lines).toContain(`route ${host(7000)} (agent:7000) pending`);
    expect(lines.at(-1)).toBe("endpoints api +tcp/4100 -tcp/4000 rejected 3000: app 'web' declares it");
    expect(await page.locator(".status").getAttribute("data-kind")).toBe("running");
  });
});
