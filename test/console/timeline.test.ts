/**
 * The start's waterfall (src/console/assets/timeline.js) in a real Chromium, against session
 * documents made up here and a runner faked by request interception (fake-runner.ts), so the
 * rendering is checked without a runner and before any runner sends a `timeline`.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium } from "../support/chromium.ts";
import { openFakeConsole } from "./fake-runner.ts";

const T0 = Date.parse("2026-12-07T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();

const TIMELINE = [
  { stage: "admitted", at: at(0) },
  { stage: "scheduled", at: at(200) },
  { stage: "image-pulled", at: at(1700), detail: "telorun/node:0.97.0-slim" },
  { stage: "container-started", at: at(1900) },
  { stage: "running", at: at(2000) },
];

const sessionDocument = (sessionId: string, extra: Record<string, unknown>) => ({
  sessionId,
  status: { kind: "exited", code: 0 },
  mode: "run",
  apps: [{ name: "app", io: "tty", generation: 0, ports: [] }],
  createdAt: at(0),
  ...extra,
});

const SESSIONS = [sessionDocument("aaaaaaaaaaaa", { timeline: TIMELINE }), sessionDocument("bbbbbbbbbbbb", {})];

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  page = await browser.context.newPage();
  const exited = [{ type: "status", status: { kind: "exited", code: 0 } }];
  await openFakeConsole(page, { sessions: SESSIONS, events: { aaaaaaaaaaaa: exited, bbbbbbbbbbbb: exited } });
});

afterAll(() => browser?.close());

describe("the start's waterfall", () => {
  it("makes each stage a bar from the previous stage's time, sorted, dropping unreadable times", async () => {
    // A string, so that the test's own transform leaves the page's dynamic import alone.
    const result = await page.evaluate(`(async () => {
      const { waterfall } = await import("/console/assets/timeline.js");
      const timeline = ${JSON.stringify(TIMELINE)};
      const shuffled = [timeline[3], timeline[0], { stage: "failed", at: "not a time" }, timeline[4], timeline[2], timeline[1]];
      return { full: waterfall(shuffled), absent: waterfall(undefined), single: waterfall([timeline[0]]) };
    })()`);
    type Waterfall = { totalMs: number; bars: { stage: string; durationMs: number; offset: number; width: number }[] };
    const { full, absent, single } = result as { full: Waterfall; absent: Waterfall; single: Waterfall };
    expect(full.totalMs).toBe(2000);
    expect(full.bars.map((bar) => [bar.stage, bar.durationMs, bar.offset, bar.width])).toEqual([
      ["admitted", 0, 0, 0],
      ["scheduled", 200, 0, 10],
      ["image-pulled", 1500, 10, 75],
      ["container-started", 200, 85, 10],
      ["running", 100, 95, 5],
    ]);
    expect(absent).toEqual({ totalMs: 0, bars: [] });
    expect(single.bars).toHaveLength(1);
  });

  it("draws the waterfall in a session's panel, and nothing for a session without a timeline", async () => {
    await page.getByRole("button", { name: "Open session aaaaaaaaaaaa" }).click();
    const panel = page.locator('section.session[data-session-id="aaaaaaaaaaaa"]');
    const stages = panel.locator(".timeline li");
    await expect.poll(() => stages.count()).toBe(5);
    expect(await panel.locator(".timeline").isVisible()).toBe(true);
    expect(await panel.locator(".timeline-total").textContent()).toBe("(2.0 s)");
    const startTime = await page.evaluate((time) => new Date(time).toLocaleTimeString(), T0);
    expect(await stages.locator(".duration").allTextContents()).toEqual([startTime, "+200 ms", "+1.5 s", "+200 ms", "+100 ms"]);
    expect(await panel.locator('.timeline li[data-stage="image-pulled"] .detail').textContent()).toBe("telorun/node:0.97.0-slim");
    const pulled = panel.locator('.timeline li[data-stage="image-pulled"] .fill');
    expect(await pulled.evaluate((fill) => [fill.style.marginLeft, fill.style.width])).toEqual(["10%", "75%"]);

    await page.getByRole("button", { name: "Open session bbbbbbbbbbbb" }).click();
    const other = page.locator('section.session[data-session-id="bbbbbbbbbbbb"]');
    await other.locator(".status[data-kind='exited']").waitFor();
    await expect.poll(() => other.locator(".created").textContent()).not.toBe("…");
    expect(await other.locator(".timeline").isHidden()).toBe(true);
    expect(await other.locator(".timeline li").count()).toBe(0);
  });
});
