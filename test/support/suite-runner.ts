/**
 * The runner a describe block's tests share: started before its first test, closed after its
 * last. The returned value reads through to that runner, so a test writes `runner.client` as
 * it would with the runner itself.
 */
import { afterAll, beforeAll } from "vitest";
import { type RunnerUnderTest, startRunner } from "./processes.ts";

export function runnerForSuite(options?: Parameters<typeof startRunner>[0]): RunnerUnderTest {
  let started: RunnerUnderTest | undefined;
  beforeAll(async () => {
    started = await startRunner(options);
  });
  afterAll(() => started?.close());
  return new Proxy({} as RunnerUnderTest, {
    get: (_target, key) => {
      if (started === undefined) throw new Error("the suite's runner is read before the suite started it");
      return Reflect.get(started, key);
    },
  });
}
