/**
 * The new-session form (src/console/assets/form.js, capabilities.js, bundle.js) in a real
 * Chromium against faked runners (fake-runner.ts), reading the create requests the page sends:
 * a folder on a Telo version behind terms, the deprecated image as the advanced choice, and a
 * runner without versions, where the image is the only choice. The live runner's side of the
 * same requests is test/cli/console.test.ts.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium } from "../support/chromium.ts";
import { CREATED_ID, type FakeRunner, openFakeConsole } from "./fake-runner.ts";

const IMAGE = { type: "string", default: "telorun/node:0.97.0-slim", enum: ["telorun/node:0.97.0-slim", "telorun/node:0.96.0-slim"] };
const PULL_POLICY = { type: "string", enum: ["missing", "always", "never"], default: "always" };

const WITH_VERSIONS = {
  displayName: "fake",
  config: {
    schema: { type: "object", required: [], properties: { image: { ...IMAGE, deprecated: true }, pullPolicy: { ...PULL_POLICY, deprecated: true } } },
    supersededByTelo: ["image", "pullPolicy"],
  },
  features: { io: ["tty"], ports: true, watch: false, teloVersions: true },
  terms: { version: "terms-1", title: "Usage agreement", body: "Be nice." },
};

const WITHOUT_VERSIONS = {
  displayName: "fake",
  config: { schema: { type: "object", required: ["image", "pullPolicy"], properties: { image: IMAGE, pullPolicy: PULL_POLICY } } },
  features: { io: ["tty"], ports: true, watch: false },
};

let browser: Browser;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "k8s-runner-console-form-"));
  await mkdir(join(folder, "app", "apps", "todo"), { recursive: true });
  await writeFile(join(folder, "app", "telo.yaml"), "kind: Telo.Application\n");
  await writeFile(join(folder, "app", "apps", "todo", "telo.yaml"), "kind: Telo.Application\n");
  await writeFile(join(folder, "app", "data.bin"), Buffer.from([0xff, 0xfe, 0x00, 0x01]));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

type Create = { path: string; body: Record<string, unknown> & { config?: unknown }; headers: Record<string, string> };

async function consoleOn(capabilities: Record<string, unknown>, events: Record<string, unknown>[] = []) {
  const page = await browser.context.newPage();
  const fake: FakeRunner = { sessions: [], events: { [CREATED_ID]: events }, capabilities, creates: [] };
  await openFakeConsole(page, fake);
  await page.setInputFiles("#folder", join(folder, "app"));
  await expect.poll(() => page.locator("#entry option").count()).toBe(2);
  return { page, creates: fake.creates as Create[] };
}

describe("the new-session form", () => {
  it("sends a folder on a Telo version once the terms are accepted, and flags a kernel reporting another version", async () => {
    const started = [{ type: "run", app: "app", generation: 1, phase: "started", trigger: "initial", telo: "0.97.0" }];
    const { page, creates } = await consoleOn(WITH_VERSIONS, started);
    expect(await page.textContent("#terms-title")).toBe("Usage agreement");
    await page.getByLabel("Telo version", { exact: true }).fill("0.98.0");
    await page.click("#start");
    // The terms box is required: the browser refuses the submit, nothing is sent.
    expect(await page.locator("#accept-terms").evaluate((box) => (box as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing)).toBe(true);
    expect(creates).toHaveLength(0);
    await page.getByLabel("I accept these terms").check();
    await page.click("#start");
    await expect.poll(() => creates.length).toBe(1);
    const [create] = creates;
    expect(create!.path).toBe("/v1/sessions");
    expect(create!.headers["x-telo-accepted-terms"]).toBe("terms-1");
    expect(create!.body).toEqual({
      bundle: {
        entryRelativePath: "telo.yaml",
        files: [
          { relativePath: "apps/todo/telo.yaml", contents: "kind: Telo.Application\n" },
          { relativePath: "data.bin", contents: "//4AAQ==", encoding: "base64" },
          { relativePath: "telo.yaml", contents: "kind: Telo.Application\n" },
        ],
      },
      env: {},
      inspect: true,
      telo: "0.98.0",
    });
    const telo = page.locator(`section.session[data-session-id="${CREATED_ID}"] .telo`);
    await expect.poll(() => telo.textContent()).toBe("0.97.0 (requested 0.98.0)");
    expect(await telo.getAttribute("class")).toContain("warning");
  });

  it("sends the image and pull policy instead, without a version, when the advanced choice is taken", async () => {
    const { page, creates } = await consoleOn(WITH_VERSIONS);
    await page.getByLabel("I accept these terms").check();
    await page.getByLabel("Telo version", { exact: true }).fill("0.98.0");
    await page.getByText("Advanced: an image instead of a version").click();
    expect(await page.locator("#image-options option").count()).toBe(2);
    await page.getByLabel("Run this image").check();
    await page.getByLabel("Image", { exact: true }).fill("telorun/node:0.96.0-slim");
    await page.click("#start");
    await expect.poll(() => creates.length).toBe(1);
    expect(creates[0]!.body.config).toEqual({ image: "telorun/node:0.96.0-slim", pullPolicy: "always" });
    expect(creates[0]!.body).not.toHaveProperty("telo");
  });

  it("offers the image as the only choice on a runner without versions, and no catalog nor terms", async () => {
    const { page, creates } = await consoleOn(WITHOUT_VERSIONS);
    expect(await page.locator("#telo-field").isHidden()).toBe(true);
    expect(await page.locator("#source-app-field").isHidden()).toBe(true);
    expect(await page.locator("#terms").isHidden()).toBe(true);
    expect(await page.textContent("#image-choice-summary")).toBe("Image");
    expect(await page.getByLabel("Image", { exact: true }).inputValue()).toBe("telorun/node:0.97.0-slim");
    await page.click("#start");
    await expect.poll(() => creates.length).toBe(1);
    expect(creates[0]!.body.config).toEqual({ image: "telorun/node:0.97.0-slim", pullPolicy: "always" });
    expect(creates[0]!.headers).not.toHaveProperty("x-telo-accepted-terms");
  });
});
