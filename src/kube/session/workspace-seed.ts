/**
 * What a watch session writes into its workspace through the `workspace` container
 * (docs/kubernetes.md "Watch pods"; docs/api.md "Watch sessions"): the bundle plus the workspace marker on first
 * bring-up, a snapshot back after an app-set change, and the bytes of an entry to "touch" it
 * for a manual reload.
 */
import type { KernelImageSettings } from "../../config/kube.ts";
import { compareTeloVersions } from "../../contract/telo-version.ts";
import type { BundleFile, ResolvedApp, WorkspaceChangeSet, WorkspaceFile, WorkspaceSnapshot } from "../../contract/wire.ts";

/** At the workspace root; the kernel anchors the shared module cache (.telo) at its directory. */
export const WORKSPACE_MARKER_PATH = "telo-workspace.yaml";

/** What current kernels accept: no blocks, the file's location is all it says. */
export const WORKSPACE_MARKER = `# Marks the root of this session's workspace.
#
# The Telo kernel anchors its module cache (.telo) at the directory holding this
# file, so every application in this workspace resolves its imports once into one
# cache instead of once per app.
`;

/** Kernels before the comment-only marker fail on an empty one and need the old block. */
export const LEGACY_WORKSPACE_MARKER = `${WORKSPACE_MARKER}modules: ["*"]
`;

type MarkerSettings = Pick<KernelImageSettings, "defaultImageVersion" | "commentMarkerSince">;

/**
 * The marker every kernel of the session accepts (docs/telo-versions.md): an app's kernel is
 * its named Telo version, else RUNNER_IMAGE_TELO_VERSION (unset: a current kernel); one older
 * than RUNNER_TELO_COMMENT_MARKER_SINCE gets the old `modules` block.
 */
export function workspaceMarker(apps: readonly Pick<ResolvedApp, "telo">[], settings: MarkerSettings): string {
  const old = apps.some((app) => {
    const version = app.telo ?? settings.defaultImageVersion;
    return version !== undefined && compareTeloVersions(version, settings.commentMarkerSince) < 0;
  });
  return old ? LEGACY_WORKSPACE_MARKER : WORKSPACE_MARKER;
}

/** The first write of a session: every bundle file, plus the marker unless the bundle has one. */
export function seedChangeSet(files: readonly BundleFile[], marker: string): WorkspaceChangeSet {
  const write = files.map((file) => ({ path: file.relativePath, content: file.contents, encoding: file.encoding ?? "utf8" }));
  if (!files.some((file) => file.relativePath === WORKSPACE_MARKER_PATH)) {
    write.push({ path: WORKSPACE_MARKER_PATH, content: marker, encoding: "utf8" });
  }
  return { write };
}

/** A snapshot written back into a recreated pod; undefined when there is nothing to write. */
export function restoreChangeSet(snapshot: WorkspaceSnapshot): WorkspaceChangeSet | undefined {
  if (snapshot.files.length === 0) return undefined;
  return { write: snapshot.files.map(({ path, content, encoding }) => ({ path, content, encoding })) };
}

/**
 * A reload without exec or signals: the entry's own bytes written back (read with
 * `encoding=base64`), which the kernel's file watcher sees as a change.
 */
export function touchChangeSet(path: string, current: WorkspaceFile): WorkspaceChangeSet {
  return { write: [{ path, content: current.content, encoding: "base64" }] };
}
