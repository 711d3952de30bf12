/**
 * The session console in a real headless Chromium (Debian's, driven by playwright-core):
 * open the page, start a session on the simulated cluster, type into its xterm.js terminal
 * and see the echo, stop it. A screenshot is kept in .tmp/console/ as the test's artifact.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubeRunner, startKubeRunner } from "../support/kube-runner.ts";
import { REPO_ROOT } from "../deploy/render.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(REPO_ROOT, ".tmp", "console");

// A bound on waiting for the runner on a busy machine, not a timing assertion.
const WAIT = { timeout: 30_000 };

let runner: KubeRunner;
let browser: BrowserContext;
let profile: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`chromium is missing at ${CHROMIUM}: apt-get install -y chromium (.ci/run installs it)`);
  runner = await startKubeRunner({ env: { RUNNER_CONSOLE: "true" } });
  profile = await mkdtemp(join(tmpdir(), "k8s-runner-chromium-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1400, height: 900 },
  });
});

afterAll(async () => {
  await browser?.close();
  await runner?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

describe("session console", () => {
  it("serves only its fixed assets: any other path is the runner's JSON 404", async () => {
    for (const path of ["/console/assets/nope.js", "/console/assets/..%2F..%2F..%2Fpackage.json", "/console/assets/"]) {
      const response = await fetch(`${runner.baseUrl}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.json(), path).toMatchObject({ statusCode: 404 });
    }
    const xterm = await fetch(`${runner.baseUrl}/console/assets/xterm.mjs`);
    expect(xterm.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await xterm.text()).toContain("export{");
  });

  it("starts a session, echoes what is typed into its terminal, keeps it across an api restart, and stops it", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${runner.baseUrl}/console`);
    await expect.poll(() => page.inputValue("#image"), WAIT).toBe("telorun/node:latest-slim");

    await page.click("#start");
    const status = page.locator("#detail-status");
    await status.and(page.locator('[data-kind="running"]')).waitFor();
    const sessionId = (await page.textContent("#detail-id"))!;
    expect(sessionId).toMatch(/^[a-z2-7]{12}$/);
    // The live list shows it too.
    await page.locator(`#sessions tr[data-session-id="${sessionId}"][data-status="running"]`).waitFor();

    await page.click("#terminal");
    await page.keyboard.type("hello console");
    await page.keyboard.press("Enter");
    // The tty echoes the typed line, then the simulated `cat` prints it back.
    const rows = page.locator("#terminal .xterm-rows");
    await expect.poll(async () => ((await rows.textContent()) ?? "").split("hello console").length - 1, WAIT).toBeGreaterThanOrEqual(2);
    await page.locator("#events li", { hasText: "status running" }).waitFor();

    // An api restart drops the terminal socket; the page reopens it from the last byte shown.
    await runner.stopApi();
    await runner.startApi();
    await page.keyboard.type("after restart");
    await page.keyboard.press("Enter");
    const copies = async (text: string) => ((await rows.textContent()) ?? "").split(text).length - 1;
    await expect.poll(() => copies("after restart"), WAIT).toBe(2);
    expect(await copies("hello console")).toBe(2);

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "console-running.png"), fullPage: true });

    await page.click("#stop");
    await status.and(page.locator('[data-kind="stopped"]')).waitFor();
    await page.locator(`#sessions tr[data-session-id="${sessionId}"][data-status="stopped"]`).waitFor();
    expect((await runner.client.getSession(sessionId)).status.kind).toBe("stopped");
    await page.screenshot({ path: join(ARTIFACTS, "console-stopped.png"), fullPage: true });
    expect(errors).toEqual([]);
  });
});
