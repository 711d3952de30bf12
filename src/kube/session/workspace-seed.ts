/**
 * What a watch session writes into its workspace through the `workspace` container
 * (docs/kubernetes.md "Watch pods"; docs/api.md "Watch sessions"): the bundle plus the workspace marker on first
 * bring-up, a snapshot back after an app-set change, and the bytes of an entry to "touch" it
 * for a manual reload.
 */
import type { BundleFile, WorkspaceChangeSet, WorkspaceFile, WorkspaceSnapshot } from "../../contract/wire.ts";

/** At the workspace root; the kernel anchors the shared module cache (.telo) at its directory. */
export const WORKSPACE_MARKER_PATH = "telo-workspace.yaml";

export const WORKSPACE_MARKER = `# Marks the root of this session's workspace.
#
# The Telo kernel anchors its module cache (.telo) at the directory holding this
# file, so every application in this workspace resolves its imports once into one
# cache instead of once per app.
modules: ["*"]
`;

/** The first write of a session: every bundle file, plus the marker unless the bundle has one. */
export function seedChangeSet(files: readonly BundleFile[]): WorkspaceChangeSet {
  const write = files.map((file) => ({ path: file.relativePath, content: file.contents, encoding: file.encoding ?? "utf8" }));
  if (!files.some((file) => file.relativePath === WORKSPACE_MARKER_PATH)) {
    write.push({ path: WORKSPACE_MARKER_PATH, content: WORKSPACE_MARKER, encoding: "utf8" });
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
