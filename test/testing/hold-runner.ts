/**
 * A test process that starts a runner and then waits to be killed: start-test-runner.test.ts
 * SIGKILLs it to show the runner does not outlive it. Prints the runner's pid and directory.
 */
import { startTestRunner } from "../../src/testing/index.ts";

const runner = await startTestRunner();
process.stdout.write(`${JSON.stringify({ pid: runner.pid, directory: runner.directory })}\n`);
setInterval(() => undefined, 60_000);
