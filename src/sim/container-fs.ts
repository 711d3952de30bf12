// What a simulated container sees as its filesystem: the pod's emptyDir volumes at their mount
// paths (shared with every container mounting them, so what an init container unpacks the main
// container reads) over a root filesystem of its own, read-only under readOnlyRootFilesystem.
import { posix } from "node:path";
import { WorkspaceTree } from "./workspace.ts";

export interface Mount {
  mountPath: string;
  tree: WorkspaceTree;
  readOnly: boolean;
}

/** Why an operation failed, in the words of the C library (`strerror`) as busybox prints them. */
export type FsError = "No such file or directory" | "Read-only file system" | "Is a directory";

export class ContainerFs {
  private readonly root = new WorkspaceTree();

  constructor(
    private readonly mounts: readonly Mount[],
    private readonly rootReadOnly: boolean,
    /** The container's workingDir: where relative paths start. */
    readonly cwd = "/",
  ) {}

  /** The tree and path inside it that `path` names: the longest mount path containing it wins. */
  private locate(path: string): { tree: WorkspaceTree; rel: string; readOnly: boolean } {
    const abs = posix.resolve(this.cwd, path);
    let best: Mount | undefined;
    for (const m of this.mounts) {
      const base = posix.resolve(m.mountPath);
      if ((abs === base || abs.startsWith(base === "/" ? "/" : `${base}/`)) && (!best || base.length > posix.resolve(best.mountPath).length)) best = m;
    }
    if (!best) return { tree: this.root, rel: abs.slice(1), readOnly: this.rootReadOnly };
    return { tree: best.tree, rel: posix.relative(posix.resolve(best.mountPath), abs), readOnly: best.readOnly };
  }

  read(path: string): Buffer | FsError {
    const { tree, rel } = this.locate(path);
    if (rel === "") return "Is a directory";
    return tree.get(rel) ?? "No such file or directory";
  }

  /** The files of the volume mounted at `mountPath` (none when nothing is mounted there), with their hashes. */
  mountedFiles(mountPath: string): Array<{ path: string; hash: string }> {
    const { tree, rel } = this.locate(mountPath);
    return rel === "" && tree !== this.root ? tree.tree().files : [];
  }

  /** `rm FILE`: the file goes from the tree that holds it. */
  remove(path: string): FsError | undefined {
    const { tree, rel, readOnly } = this.locate(path);
    if (rel === "") return "Is a directory";
    if (!tree.has(rel)) return "No such file or directory";
    if (readOnly) return "Read-only file system";
    tree.remove(rel);
    return undefined;
  }

  write(path: string, data: Buffer): FsError | undefined {
    const { tree, rel, readOnly } = this.locate(path);
    if (readOnly) return "Read-only file system";
    if (rel === "") return "Is a directory";
    tree.put(rel, data);
    return undefined;
  }
}
