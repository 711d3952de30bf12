/**
 * A real headless Chromium for the console's tests (Debian's, driven by playwright-core, with a
 * fresh profile each time), and axe-core's accessibility check of a page in it.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, type Page, chromium } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";

export type Browser = { context: BrowserContext; close(): Promise<void> };

export async function launchChromium(viewport = { width: 1400, height: 900 }): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`chromium is missing at ${CHROMIUM}: apt-get install -y chromium (.ci/run installs it)`);
  const profile = await mkdtemp(join(tmpdir(), "k8s-runner-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
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
    viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

/**
 * axe-core's violations on the page as it is now, the serious and critical ones only (the
 * project's bar). The script is evaluated, not added as a tag, so no page policy can block it.
 */
export async function seriousViolations(page: Page): Promise<{ id: string; help: string; targets: string[] }[]> {
  const source = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => ({ id: violation.id, help: violation.help, targets: violation.nodes.map((node) => node.target.join(" ")) }));
}
