/** The command-line client's one variable: which runner it talks to when `--url` is not given. */
import * as v from "valibot";
import { parseEnv, stringVar } from "./env-values.ts";

export const cliEnvSchema = v.object({
  K8S_RUNNER_URL: stringVar(undefined),
});

export function loadCliConfig(env: NodeJS.ProcessEnv): { runnerUrl: string | undefined } {
  return { runnerUrl: parseEnv(cliEnvSchema, env).K8S_RUNNER_URL };
}
