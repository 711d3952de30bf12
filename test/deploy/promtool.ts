/** The promtool binary the monitoring tests check the alert rules with (test/deploy/promtool.sh). */
import { execFileSync } from "node:child_process";
import { REPO_ROOT } from "./render.ts";

/** Built on first use (a cold build takes minutes; later runs find it in the tools cache). */
export function promtoolBinary(): string {
  return execFileSync("bash", ["test/deploy/promtool.sh"], { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
}
