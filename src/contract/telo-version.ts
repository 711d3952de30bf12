/**
 * Telo versions as requests name them (docs/telo-versions.md): the grammar, semver precedence,
 * the oldest kernel the runner can supervise, and unreleased identities. Pure functions.
 */

/** `MAJOR.MINOR.PATCH`, an optional prerelease, optional build metadata. */
export const TELO_VERSION_PATTERN = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** The oldest kernel whose debug stream and command line this runner drives. */
export const OLDEST_SUPERVISED_TELO = "0.95.0";

/** Build metadata naming a kernel built from an unreleased tree: it has no published image. */
const UNRELEASED_BUILD = "unreleased";

export function isTeloVersion(value: unknown): value is string {
  return typeof value === "string" && TELO_VERSION_PATTERN.test(value);
}

export function isUnreleased(version: string): boolean {
  const plus = version.indexOf("+");
  return plus >= 0 && version.slice(plus + 1) === UNRELEASED_BUILD;
}

type Parsed = { core: [number, number, number]; prerelease: string[] };

function parse(version: string): Parsed {
  const withoutBuild = version.split("+")[0]!;
  const dash = withoutBuild.indexOf("-");
  const core = (dash >= 0 ? withoutBuild.slice(0, dash) : withoutBuild).split(".").map(Number) as [number, number, number];
  return { core, prerelease: dash >= 0 ? withoutBuild.slice(dash + 1).split(".") : [] };
}

function compareIdentifiers(a: string, b: string): number {
  const numeric = /^\d+$/;
  if (numeric.test(a) && numeric.test(b)) return Number(a) - Number(b);
  if (numeric.test(a)) return -1;
  if (numeric.test(b)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Semver precedence: negative when a < b, 0 when equal, positive when a > b; build metadata is ignored. */
export function compareTeloVersions(a: string, b: string): number {
  const left = parse(a);
  const right = parse(b);
  for (let index = 0; index < 3; index++) {
    const difference = left.core[index]! - right.core[index]!;
    if (difference !== 0) return difference;
  }
  // A prerelease precedes its release.
  if (left.prerelease.length === 0 || right.prerelease.length === 0) return right.prerelease.length - left.prerelease.length;
  for (let index = 0; index < Math.min(left.prerelease.length, right.prerelease.length); index++) {
    const difference = compareIdentifiers(left.prerelease[index]!, right.prerelease[index]!);
    if (difference !== 0) return difference;
  }
  return left.prerelease.length - right.prerelease.length;
}

/** The refusal reason for a version older than the oldest supervised kernel, or undefined. */
export function tooOldReason(version: string): string | undefined {
  if (compareTeloVersions(version, OLDEST_SUPERVISED_TELO) >= 0) return undefined;
  return `telo ${version} is older than the oldest kernel this runner can supervise (${OLDEST_SUPERVISED_TELO}). Pin telo ${OLDEST_SUPERVISED_TELO} or newer for this workspace`;
}
