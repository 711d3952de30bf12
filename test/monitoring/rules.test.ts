/**
 * The alert rules through promtool, built from its Go module (test/deploy/promtool.sh): `check
 * rules` on the rules each install renders (the kustomize component and the chart), then `test
 * rules` with rules.test.yaml's input series and expected alerts.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promtoolBinary } from "../deploy/promtool.ts";
import { REPO_ROOT } from "../deploy/render.ts";
import { chartObjects, overlayObjects, type RuleGroups, ruleGroups } from "./render.ts";

let promtool: string;
let scratch: string;

// A cold build of promtool takes minutes on two cores (the tools cache makes later runs instant).
beforeAll(() => {
  promtool = promtoolBinary();
  scratch = mkdtempSync(join(tmpdir(), "runner-rules-"));
}, 30 * 60_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** promtool's verdict: ok, and what it printed (its reasons when not ok). */
function promtoolRun(args: string[]): { ok: boolean; output: string } {
  try {
    return { ok: true, output: execFileSync(promtool, args, { encoding: "utf8", stdio: "pipe" }) };
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${stdout ?? ""}${stderr ?? String(error)}` };
  }
}

/** The rules as a rules file, beside a copy of the unit tests that name it (rules.yaml). */
function rulesDir(name: string, groups: RuleGroups): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "rules.yaml"), stringify(groups));
  copyFileSync(join(REPO_ROOT, "test/monitoring/rules.test.yaml"), join(dir, "rules.test.yaml"));
  return dir;
}

const SOURCES = [
  ["the kustomize component", () => ruleGroups(overlayObjects())],
  ["the chart", () => ruleGroups(chartObjects())],
] as const;

describe.each(SOURCES)("the alert rules of %s", (name, groups) => {
  it("pass promtool check rules", () => {
    const dir = rulesDir(name.replaceAll(" ", "-"), groups());
    const result = promtoolRun(["check", "rules", join(dir, "rules.yaml")]);
    expect(result.output).toContain("SUCCESS");
    expect(result.ok, result.output).toBe(true);
  });

  it("pass the unit tests of rules.test.yaml", () => {
    const dir = rulesDir(name.replaceAll(" ", "-"), groups());
    const result = promtoolRun(["test", "rules", join(dir, "rules.test.yaml")]);
    expect(result.ok, result.output).toBe(true);
  });
});

describe("the rule unit tests", () => {
  it("fail when an alert forgets its wait (every `for` removed): the near misses are checked", () => {
    const hasty = ruleGroups(overlayObjects());
    for (const group of hasty.groups) for (const rule of group.rules) delete rule.for;
    const result = promtoolRun(["test", "rules", join(rulesDir("hasty", hasty), "rules.test.yaml")]);
    expect(result.ok).toBe(false);
    for (const alert of ["RunnerReplicaWithoutLease", "RunnerShardsUnserved"]) expect(result.output).toContain(alert);
  });
});
