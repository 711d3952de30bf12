/** Usage terms (docs/api.md "Terms"), resolved once at startup. */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Terms } from "../contract/wire.ts";
import { ConfigError } from "./env-values.ts";

export type TermsInputs = {
  RUNNER_TERMS_FILE: string | undefined;
  RUNNER_TERMS_BODY: string | undefined;
  RUNNER_TERMS_VERSION: string | undefined;
  RUNNER_TERMS_TITLE: string | undefined;
};

export function loadTerms(inputs: TermsInputs, rawBody: string | undefined): Terms | undefined {
  let body = rawBody;
  if (inputs.RUNNER_TERMS_FILE !== undefined) {
    try {
      body = readFileSync(inputs.RUNNER_TERMS_FILE, "utf8");
    } catch (error) {
      throw new ConfigError(
        `RUNNER_TERMS_FILE '${inputs.RUNNER_TERMS_FILE}' could not be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
  }
  if (body === undefined || body.trim() === "") return undefined;
  return {
    version: inputs.RUNNER_TERMS_VERSION ?? createHash("sha256").update(body).digest("hex").slice(0, 12),
    title: inputs.RUNNER_TERMS_TITLE ?? "Usage agreement",
    body,
  };
}
