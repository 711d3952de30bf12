import { ConfigError } from "./env-values.ts";

/** Runs a config loader; a refusal prints its one-line message and exits 2 (docs/operating.md "Configuration"). */
export function exitOnConfigError<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}
