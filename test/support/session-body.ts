import type { RunnerClient } from "../../src/client/index.ts";

type CreateBody = Parameters<RunnerClient["createSession"]>[0];

/**
 * A minimal valid create body, for tests and benchmarks alike. `config` adds to the minimal
 * config (the scripted backend's `script`, the simulated cluster's `simulate`); `overrides`
 * replace top-level fields.
 */
export function sessionBody(config: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}): CreateBody {
  return {
    bundle: { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: "kind: Telo.Application\n" }] },
    env: {},
    config: { image: "telorun/node:latest-slim", pullPolicy: "missing", ...config },
    ...overrides,
  } as CreateBody;
}
