/**
 * The session console in a real headless Chromium (Debian's, driven by playwright-core) against
 * the runner on the simulated cluster, with routing (an Ingress controller the simulator plays)
 * and a one-app catalog: a session from a folder on a Telo version, with env and a port, shows
 * its status, the version its kernel reports and its route's link; a catalog app started with
 * the keyboard runs beside it; both stop. No request of the page fails, axe-core finds no serious
 * or critical violation, and a narrow window scrolls nothing sideways. A refused version shows
 * the runner's reason; another session's terminal echoes what is typed, survives an api restart,
 * and lets the keyboard out with Escape then Tab. Screenshots go to .tmp/console/, and to
 * docs/images/ with K8S_RUNNER_UPDATE_SCREENSHOTS=1.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../deploy/render.ts";
import { type Browser, launchChromium, seriousViolations } from "../support/chromium.ts";
import { type KubeRunner, SESSION_NAMESPACE, startKubeRunner } from "../support/kube-runner.ts";
import { waitFor } from "../support/wait.ts";

const ARTIFACTS = join(REPO_ROOT, ".tmp", "console");
const DOC_IMAGES = join(REPO_ROOT, "docs", "images");
const BASE_DOMAIN = "sessions.example.test";
const VERSION = "0.97.0";

// A bound on waiting for the runner on a busy machine, not a timing assertion.
const WAIT = { timeout: 30_000 };

let runner: KubeRunner;
let browser: Browser;
let folder: string;

/** A bundle folder as a user has one: an entry at the root, a nested app, a binary file, and a .git to leave out. */
async function bundleFolder(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "k8s-runner-console-"));
  const app = join(root, "my-app");
  await mkdir(join(app, "apps", "todo"), { recursive: true });
  await mkdir(join(app, ".git"), { recursive: true });
  await writeFile(join(app, "telo.yaml"), "kind: Telo.Application\n");
  await writeFile(join(app, "apps", "todo", "telo.yaml"), "kind: Telo.Application\n");
  await writeFile(join(app, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]));
  await writeFile(join(app, ".git", "HEAD"), "ref: refs/heads/main\n");
  return root;
}

beforeAll(async () => {
  runner = await startKubeRunner({
    env: {
      RUNNER_CONSOLE: "true",
      SESSION_ROUTING_MODE: "ingress",
      SESSION_ROUTING_BASE_DOMAIN: BASE_DOMAIN,
      RUNNER_APPS: JSON.stringify({ tool: { image: "acme/tool:1", title: "Acme tool", description: "A predefined app of the catalog." } }),
    },
  });
  // The simulated cluster's ingress controller programs Ingresses of a class it finds.
  await runner.networking.createIngressClass({
    body: {
      metadata: { name: "sim-ingress", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } },
      spec: { controller: "example.test/ingress" },
    },
  });
  folder = await bundleFolder();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await runner?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Every request of the page that failed or was answered with an error, as `status method url`. */
function failures(page: Page): string[] {
  const failed: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  // The page closing its own event streams aborts them; that is not a failure.
  page.on("requestfailed", (request) => {
    if (request.failure()?.errorText !== "net::ERR_ABORTED") failed.push(`${request.failure()?.errorText} ${request.method()} ${request.url()}`);
  });
  return failed;
}

const panelOf = (page: Page, id: string) => page.locator(`section.session[data-session-id="${id}"]`);

/** The id of the newest panel once there are `count` of them (a new panel goes first). */
async function newPanelId(page: Page, count: number): Promise<string> {
  await expect.poll(() => page.locator("section.session").count(), WAIT).toBe(count);
  const id = (await page.locator("section.session").first().getAttribute("data-session-id"))!;
  expect(id).toMatch(/^[a-z2-7]{12}$/);
  return id;
}

const statusIs = (panel: Locator, kind: string) => panel.locator(`.status[data-kind="${kind}"]`).waitFor(WAIT);

/** Presses Tab until `target` has the focus: the form is reachable in its tab order. */
async function tabTo(page: Page, target: Locator): Promise<void> {
  for (let presses = 0; presses < 40; presses++) {
    if (await target.evaluate((element) => element.matches(":focus"))) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`Tab never reached ${target}`);
}

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name) });
  if (process.env.K8S_RUNNER_UPDATE_SCREENSHOTS === "1") await page.screenshot({ path: join(DOC_IMAGES, name) });
}

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

  it("starts a folder on a Telo version and a catalog app, shows status, version and route, stops both, and is accessible", async () => {
    const page = await browser.context.newPage();
    const failed = failures(page);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${runner.baseUrl}/console`);
    await page.locator("#source-app-field").waitFor(WAIT);

    await page.setInputFiles("#folder", join(folder, "my-app"));
    await expect.poll(() => page.textContent("#folder-summary"), WAIT).toBe("3 files, 1 KiB; 1 in .git or node_modules left out");
    expect(await page.locator("#entry option").allTextContents()).toEqual(["telo.yaml", "apps/todo/telo.yaml"]);
    await page.getByLabel("Telo version", { exact: true }).fill(VERSION);
    await page.click("#add-env");
    await page.getByLabel("Variable 1 name").fill("GREETING");
    await page.getByLabel("Variable 1 value").fill("hello");
    await page.click("#add-port");
    await page.getByLabel("Port 1 number").fill("3000");
    await page.click("#start");

    const versioned = await newPanelId(page, 1);
    const panel = panelOf(page, versioned);
    await statusIs(panel, "running");
    await expect.poll(() => panel.locator(".telo").textContent(), WAIT).toBe(VERSION);
    const host = `3000-${versioned}.${BASE_DOMAIN}`;
    await panel.locator('.endpoints tr[data-endpoint="tcp/3000"][data-route="programmed"]').waitFor(WAIT);
    expect(await panel.getByRole("link", { name: `https://${host}` }).getAttribute("href")).toBe(`https://${host}`);
    // The request named the version, not an image: the pod runs the version's image, with the env.
    const pod = await waitFor("the session's pod", async () => {
      const pods = await runner.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `telo.run/session-id=${versioned}` });
      return pods.items[0];
    });
    const container = pod.spec?.containers.find((candidate) => candidate.name === "session");
    expect(container?.image).toBe(`telorun/node:${VERSION}-slim`);
    expect(container?.env?.find((variable) => variable.name === "GREETING")?.value).toBe("hello");
    await panel.locator('.events li[data-type="reachability"]').first().waitFor(WAIT);
    await page.locator(`#sessions tr[data-session-id="${versioned}"]`).waitFor(WAIT);
    expect(await panel.locator(".mode").textContent()).toBe("run");
    await screenshot(page, "console-session.png");

    // The catalog app, with the keyboard only: the radio by arrow key, the form's button by Tab.
    await page.getByLabel("A folder").focus();
    await page.keyboard.press("ArrowRight");
    expect(await page.getByLabel("A catalog app").isChecked()).toBe(true);
    expect(await page.locator("#app").inputValue()).toBe("tool");
    expect(await page.textContent("#app-description")).toBe("A predefined app of the catalog.");
    await tabTo(page, page.locator("#start"));
    await page.keyboard.press("Enter");
    const app = await newPanelId(page, 2);
    await statusIs(panelOf(page, app), "running");
    // Both sessions are live at once: the first panel still streams.
    expect(await panel.locator('.status[data-kind="running"]').count()).toBe(1);
    await page.locator(`#sessions tr[data-session-id="${app}"][data-status="running"]`).waitFor(WAIT);

    expect(await seriousViolations(page)).toEqual([]);

    // A narrow window: one column, nothing scrolls sideways, still accessible.
    await page.setViewportSize({ width: 420, height: 900 });
    await expect.poll(() => page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "console-narrow.png");
    await page.setViewportSize({ width: 1400, height: 900 });

    await panelOf(page, app).getByRole("button", { name: `Stop session ${app}` }).focus();
    await page.keyboard.press("Enter");
    await panel.getByRole("button", { name: `Stop session ${versioned}` }).click();
    for (const id of [versioned, app]) {
      await statusIs(panelOf(page, id), "stopped");
      await page.locator(`#sessions tr[data-session-id="${id}"][data-status="stopped"]`).waitFor(WAIT);
      expect((await runner.client.getSession(id)).status.kind).toBe("stopped");
    }
    // The stopped sessions' panels close; the sessions stay in the list.
    await panelOf(page, app).getByRole("button", { name: `Close the panel of session ${app}` }).click();
    expect(await page.locator("section.session").count()).toBe(1);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows why a version is refused; echoes what is typed into a session's terminal, keeps it across an api restart, lets the keyboard out, and stops it", async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${runner.baseUrl}/console`);
    await page.locator("#source-app-field").waitFor(WAIT);
    await page.setInputFiles("#folder", join(folder, "my-app"));
    await expect.poll(() => page.locator("#entry option").count(), WAIT).toBe(2);
    // A version the runner refuses: the form says why (its `reason`), and starts nothing.
    await page.getByLabel("Telo version", { exact: true }).fill("0.94.0");
    await page.click("#start");
    await expect.poll(() => page.textContent("#form-error"), WAIT).toMatch(/0\.94\.0.*0\.95\.0/);
    expect(await page.textContent("#form-error")).not.toContain("is not available for app");
    expect(await page.locator("section.session").count()).toBe(0);
    // Blank: the runner's default kernel.
    await page.getByLabel("Telo version", { exact: true }).fill("");
    await page.click("#start");
    const sessionId = await newPanelId(page, 1);
    const panel = panelOf(page, sessionId);
    await statusIs(panel, "running");

    await panel.locator(".term-host").click();
    await page.keyboard.type("hello console");
    await page.keyboard.press("Enter");
    // The tty echoes the typed line, then the simulated `cat` prints it back.
    const rows = panel.locator(".term-host .xterm-rows");
    const copies = async (text: string) => ((await rows.textContent()) ?? "").split(text).length - 1;
    await expect.poll(() => copies("hello console"), WAIT).toBe(2);
    await panel.locator(".events li", { hasText: "status running" }).waitFor();

    // An api restart drops the terminal socket; the page reopens it from the last byte shown.
    await runner.stopApi();
    await runner.startApi();
    await page.keyboard.type("after restart");
    await page.keyboard.press("Enter");
    await expect.poll(() => copies("after restart"), WAIT).toBe(2);
    expect(await copies("hello console")).toBe(2);
    await page.screenshot({ path: join(ARTIFACTS, "console-terminal.png"), fullPage: true });

    // Tab goes to the app; Escape then Tab leaves the terminal for the next control.
    await page.keyboard.press("Tab");
    expect(await panel.locator(".term-host textarea").evaluate((input) => input.matches(":focus"))).toBe(true);
    await page.keyboard.press("Escape");
    await page.keyboard.press("Tab");
    expect(await panel.locator(".log summary").evaluate((summary) => summary.matches(":focus"))).toBe(true);

    await panel.getByRole("button", { name: `Stop session ${sessionId}` }).click();
    await statusIs(panel, "stopped");
    await page.locator(`#sessions tr[data-session-id="${sessionId}"][data-status="stopped"]`).waitFor(WAIT);
    expect(errors).toEqual([]);
    await page.close();
  });
});
