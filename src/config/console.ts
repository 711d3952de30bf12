/**
 * The session console's switch (docs/clients.md "Session console"). Off by default: the console lists
 * every session, and a session id is all it takes to attach to its terminal, so it is for
 * operators behind the same trust boundary as the API itself.
 */
import * as v from "valibot";
import { booleanVar, parseEnv } from "./env-values.ts";

export const consoleEnvSchema = v.object({
  RUNNER_CONSOLE: booleanVar("RUNNER_CONSOLE", false),
});

export function loadConsoleConfig(env: NodeJS.ProcessEnv): { enabled: boolean } {
  return { enabled: parseEnv(consoleEnvSchema, env).RUNNER_CONSOLE };
}
