import { describe, expect, it } from "vitest";
import { failureDetail, stripAnsi } from "../../../src/kube/status/failure-detail.ts";
import { podFailureMessage } from "../../../src/kube/status/terminal-status.ts";

const RED = "\u001b[31m";
const BOLD = "\u001b[1m";
const RESET = "\u001b[0m";

/** A kernel's load failure as its terminal shows it: one coloured block per diagnostic, the count last. */
function kernelFailure(count: number): string {
  const blocks = Array.from(
    { length: count },
    (_, index) =>
      `${RED}${BOLD}error${RESET}${BOLD}[TELO_SCHEMA]${RESET}: resource 'Http.Server' #${index + 1} is missing 'port'\r\n` +
      `  ${BOLD}-->${RESET} telo.yaml:${index * 4 + 3}:5\r\n\r\n`,
  );
  return `${blocks.join("")}${RED}${count} errors${RESET}; the application was not started\r\n`;
}

describe("failureDetail", () => {
  it("strips colour, cursor and title escapes, keeping the text", () => {
    expect(stripAnsi(`${RED}red${RESET} \u001b[2K\u001b[1Gline \u001b]0;title\u0007done`)).toBe("red line done");
  });

  it("keeps a short output whole, as plain text without blank lines", () => {
    expect(failureDetail(`${RED}boom${RESET}\r\n\r\n  at main\r\n`)).toBe("boom\n  at main");
  });

  it("names the count and the first diagnostics of a long kernel failure, within 500 characters", () => {
    const detail = failureDetail(kernelFailure(13));
    expect(detail.length).toBeLessThanOrEqual(501);
    expect(detail).not.toContain("\u001b");
    expect(detail.split("\n")[0]).toBe("13 errors; the application was not started");
    expect(detail).toContain("error[TELO_SCHEMA]: resource 'Http.Server' #1 is missing 'port'");
    expect(detail).toContain("--> telo.yaml:3:5");
    // Whole lines only, and it says there was more.
    expect(detail.endsWith("…")).toBe(true);
    expect(detail).not.toContain("#13");
  });

  it("cuts a single over-long line at the limit", () => {
    expect(failureDetail("z".repeat(700))).toBe(`${"z".repeat(500)}…`);
  });

  it("makes a failed pod's status message from it", () => {
    const pod = {
      status: {
        phase: "Failed",
        containerStatuses: [
          { name: "session", image: "i", imageID: "", ready: false, restartCount: 0, state: { terminated: { exitCode: 1, reason: "Error", message: kernelFailure(13) } } },
        ],
      },
    };
    const message = podFailureMessage(pod);
    expect(message.startsWith('container "session" failed: Error (exit code 1): 13 errors; the application was not started\n')).toBe(true);
    expect(message).not.toContain("\u001b");
  });
});
