import { describe, expect, it } from "vitest";
import { failureDetail, stripAnsi } from "../../../src/kube/status/failure-detail.ts";
import { podFailureMessage } from "../../../src/kube/status/terminal-status.ts";

const RED = "\u001b[31m";
const BOLD = "\u001b[1m";
const RESET = "\u001b[0m";
const DIM = "\u001b[2m";

/**
 * A failed `telo run` as the Telo CLI prints it (its formatDiagnostics, then the count): one line
 * per diagnostic (where, severity, message, code), details indented under it, the count last.
 */
function teloRunFailure(): string {
  const echoes = Array.from(
    { length: 12 },
    (_, index) => `  ${RED}error${RESET}  ${DIM}Http.Handler${RESET} todo${index}: depends on a resource that failed to initialize  ${DIM}DEPENDENCY_FAILED${RESET}\n         ${DIM}see Http.Api todos${RESET}\n`,
  );
  const cause = `telo.yaml:4:12  ${RED}error${RESET}  Reference 'Http.Api.todos' does not resolve to a declared resource.  ${DIM}UNRESOLVED_REFERENCE${RESET}\n`;
  return `${echoes.join("")}${cause}\n${RED}13 errors${RESET}\n`;
}

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

  it("names the count and each kind of diagnostic of a long kernel failure, once, within 500 characters", () => {
    const detail = failureDetail(kernelFailure(13));
    expect(detail).not.toContain("\u001b");
    expect(detail).toBe(
      ["13 errors; the application was not started", "error[TELO_SCHEMA]: resource 'Http.Server' #1 is missing 'port' (and 12 more like it)", "  --> telo.yaml:3:5"].join("\n"),
    );
  });

  it("puts the diagnostic that says what is wrong first, though the kernel printed it thirteenth", () => {
    // What a manifest with one dangling reference printed: a dozen diagnostics that follow from
    // it (each with its code frame), the reference itself last, then the count.
    const echoes = Array.from(
      { length: 12 },
      (_, index) =>
        `${RED}warning${RESET}[UNUSED_RESOURCE]: resource 'Todo.Handler${index}' is not used by any route\r\n  --> telo.yaml:${index * 6 + 10}:3\r\n   |\r\n${index * 6 + 10} |   - kind: Http.Handler\r\n   |     ^^^^^^^^^^^^^^^^^^\r\n\r\n`,
    );
    const cause = `${RED}error${RESET}[UNRESOLVED_REFERENCE]: 'Http.Api.todos' is not defined\r\n  --> telo.yaml:4:12\r\n   |\r\n 4 |   api: !ref Http.Api.todos\r\n`;
    const output = `[inspect] holding the application open\r\n${echoes.join("")}${cause}${RED}1 error, 12 warnings${RESET}\r\n`;
    const detail = failureDetail(output);
    const lines = detail.split("\n");
    expect(lines.slice(0, 3)).toEqual(["1 error, 12 warnings", "error[UNRESOLVED_REFERENCE]: 'Http.Api.todos' is not defined", "  --> telo.yaml:4:12"]);
    // Then what came before the diagnostics, then the warnings, each once, the code frames left to the terminal.
    expect(lines[3]).toBe("[inspect] holding the application open");
    expect(lines[4]).toBe("warning[UNUSED_RESOURCE]: resource 'Todo.Handler0' is not used by any route (and 11 more like it)");
    expect(detail).not.toContain("^^^");
    expect(detail.length).toBeLessThanOrEqual(300);
  });

  it("keeps errors before warnings when each is of its own kind, and cuts the rest at whole lines", () => {
    const warnings = Array.from({ length: 12 }, (_, index) => `warning[W${index}]: something minor about resource number ${index} of the application manifest\n  --> telo.yaml:${index + 1}:1\n`);
    const detail = failureDetail(`${warnings.join("")}error[UNRESOLVED_REFERENCE]: 'Http.Api.todos' is not defined\n  --> telo.yaml:40:7\n1 error, 12 warnings\n`);
    expect(detail.split("\n").slice(0, 3)).toEqual(["1 error, 12 warnings", "error[UNRESOLVED_REFERENCE]: 'Http.Api.todos' is not defined", "  --> telo.yaml:40:7"]);
    expect(detail.length).toBeLessThanOrEqual(501);
    expect(detail.endsWith("…")).toBe(true);
  });

  it("reads the Telo CLI's diagnostics (where, severity, message, code), and puts the one that names the cause before its echoes", () => {
    // The count, then each code once: the twelve echoes are one line, so the cause is not cut off.
    expect(failureDetail(teloRunFailure()).split("\n")).toEqual([
      "13 errors",
      "error  Http.Handler todo0: depends on a resource that failed to initialize  DEPENDENCY_FAILED (and 11 more like it)",
      "telo.yaml:4:12  error  Reference 'Http.Api.todos' does not resolve to a declared resource.  UNRESOLVED_REFERENCE",
    ]);
  });

  it("keeps the Telo CLI's errors before its warnings, whatever order it printed them in", () => {
    const output = [
      "telo.yaml:9:3  warning  variables.port is declared but never referenced in any CEL expression.  UNUSED_DECLARATION",
      "telo.yaml:14:5  error  No Telo.Definition found for kind \"Http.Srver\".  UNDEFINED_KIND",
      "",
      "1 error, 1 warning",
    ].join("\n");
    expect(failureDetail(output).split("\n")).toEqual([
      "1 error, 1 warning",
      'telo.yaml:14:5  error  No Telo.Definition found for kind "Http.Srver".  UNDEFINED_KIND',
      "telo.yaml:9:3  warning  variables.port is declared but never referenced in any CEL expression.  UNUSED_DECLARATION",
    ]);
  });

  it("leaves a single diagnostic as the kernel printed it", () => {
    expect(failureDetail("error: Cannot find module 'x'\n    at load (kernel.js:1:1)\n")).toBe("error: Cannot find module 'x'\n    at load (kernel.js:1:1)");
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
