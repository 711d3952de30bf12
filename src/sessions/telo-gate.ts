/**
 * The Telo-version refusals of admission (docs/telo-versions.md), pure functions of the request
 * and the backend's support. Their order is the contract's: a runner without versions refuses
 * any `telo` first, then a malformed or partial naming, then (in admission, with the config) an
 * image or pull policy beside a version, then a version no image can be supplied for.
 */
import { Problem } from "../contract/problem.ts";
import { isTeloVersion, isUnreleased, tooOldReason } from "../contract/telo-version.ts";
import { DEFAULT_APP_NAME } from "../contract/wire.ts";

/** The backend's answer for a version: why it cannot supply it, or undefined. */
export type SupplyTelo = (version: string) => string | undefined;

type AppNaming = { name: string; telo?: unknown };

const UNSUPPORTED =
  "this runner does not run apps at a named Telo version (see features.teloVersions in /v1/capabilities); omit telo to run its configured kernel image";

/**
 * The version each app names, in request order (all undefined when none does). `topLevel` is
 * the request's own `telo`, which names the version of a single-app request.
 */
export function requestedVersions(apps: readonly AppNaming[] | undefined, topLevel: unknown, supply: SupplyTelo | undefined): (string | undefined)[] {
  const named = apps ?? [{ name: DEFAULT_APP_NAME }];
  const anyNamed = topLevel !== undefined || named.some((app) => app.telo !== undefined);
  if (!anyNamed) return named.map(() => undefined);
  if (!supply) throw new Problem("invalid", "telo_version_unsupported", UNSUPPORTED);
  if (topLevel !== undefined && named.length > 1) {
    throw invalid("a top-level telo names the version of a single-app request; name it on each entry of apps instead");
  }
  const versions = named.map((app) => app.telo ?? topLevel);
  for (const [index, version] of versions.entries()) {
    if (version !== undefined && !isTeloVersion(version)) {
      throw invalid(`telo ${JSON.stringify(version)} of app '${named[index]!.name}' is not a version (MAJOR.MINOR.PATCH, with an optional -prerelease and +build)`);
    }
  }
  if (topLevel !== undefined && named[0]!.telo !== undefined && named[0]!.telo !== topLevel) {
    throw invalid(`telo is named twice for app '${named[0]!.name}', as ${String(topLevel)} and ${String(named[0]!.telo)}`);
  }
  const without = named.filter((_app, index) => versions[index] === undefined).map((app) => `'${app.name}'`);
  if (without.length > 0) {
    throw invalid(`app${without.length > 1 ? "s" : ""} ${without.join(", ")} name${without.length > 1 ? "" : "s"} no telo version while others do: name one on every app or on none`);
  }
  return versions as string[];
}

/** The last refusal: a version too old to supervise, or one the backend has no image for. */
export function checkAvailable(apps: readonly AppNaming[] | undefined, versions: readonly (string | undefined)[], supply: SupplyTelo | undefined): void {
  for (const [index, version] of versions.entries()) {
    if (version === undefined || !supply) continue;
    const reason = tooOldReason(version) ?? supply(version);
    if (reason === undefined) continue;
    const app = apps?.[index]?.name ?? DEFAULT_APP_NAME;
    throw new Problem("invalid", "telo_version_unavailable", `telo ${version} is not available for app '${app}': ${reason}`, {
      message: `telo ${version} is not available for app '${app}': ${reason}`,
      app,
      version,
      reason,
    });
  }
}

/** The backend's refusal text for an unreleased identity when no image stands in for those. */
export function unreleasedReason(version: string): string | undefined {
  if (!isUnreleased(version)) return undefined;
  return `${version} is an unreleased build, which has no published image. Pin a released telo version for this workspace, or have the runner's operator set RUNNER_TELO_UNRELEASED_IMAGE to a kernel image built from that same tree`;
}

function invalid(message: string): Problem {
  return new Problem("invalid", "invalid_telo_version", message);
}
