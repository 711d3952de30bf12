import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import {
  restoreChangeSet,
  seedChangeSet,
  touchChangeSet,
  LEGACY_WORKSPACE_MARKER,
  WORKSPACE_MARKER,
  WORKSPACE_MARKER_PATH,
  workspaceMarker,
} from "../../../src/kube/session/workspace-seed.ts";

describe("seedChangeSet", () => {
  it("writes every bundle file, utf8 unless said otherwise, and adds the marker", () => {
    expect(
      seedChangeSet([
        { relativePath: "api/telo.yaml", contents: "kind: Telo.Application\n" },
        { relativePath: "logo.png", contents: "iVBORw0KGgo=", encoding: "base64" },
      ], WORKSPACE_MARKER),
    ).toEqual({
      write: [
        { path: "api/telo.yaml", content: "kind: Telo.Application\n", encoding: "utf8" },
        { path: "logo.png", content: "iVBORw0KGgo=", encoding: "base64" },
        { path: "telo-workspace.yaml", content: WORKSPACE_MARKER, encoding: "utf8" },
      ],
    });
  });

  it("keeps the bundle's own marker", () => {
    expect(seedChangeSet([{ relativePath: WORKSPACE_MARKER_PATH, contents: "modules: [api]\n" }], WORKSPACE_MARKER)).toEqual({
      write: [{ path: "telo-workspace.yaml", content: "modules: [api]\n", encoding: "utf8" }],
    });
  });

  it("seeds a comment-only marker for current kernels and the modules block for older ones", () => {
    expect(parse(WORKSPACE_MARKER)).toBeNull();
    expect(parse(LEGACY_WORKSPACE_MARKER)).toEqual({ modules: ["*"] });
    const settings = { defaultImageVersion: undefined, commentMarkerSince: "0.96.0" };
    expect(workspaceMarker([{}], settings)).toBe(WORKSPACE_MARKER);
    expect(workspaceMarker([{ telo: "0.96.0" }], settings)).toBe(WORKSPACE_MARKER);
    expect(workspaceMarker([{ telo: "0.96.0-rc.1" }], settings)).toBe(LEGACY_WORKSPACE_MARKER);
    expect(workspaceMarker([{ telo: "0.97.1" }, { telo: "0.95.2" }], settings)).toBe(LEGACY_WORKSPACE_MARKER);
    // No version named: RUNNER_IMAGE's, as the operator said it.
    expect(workspaceMarker([{}], { ...settings, defaultImageVersion: "0.95.0" })).toBe(LEGACY_WORKSPACE_MARKER);
    expect(workspaceMarker([{ telo: "0.99.0" }], { ...settings, defaultImageVersion: "0.95.0" })).toBe(WORKSPACE_MARKER);
  });
});

describe("restoreChangeSet", () => {
  it("writes a snapshot back file by file, and nothing for an empty one", () => {
    expect(
      restoreChangeSet({ files: [{ path: "telo.yaml", hash: "ab12", content: "a2luZDogeA==", encoding: "base64" }] }),
    ).toEqual({ write: [{ path: "telo.yaml", content: "a2luZDogeA==", encoding: "base64" }] });
    expect(restoreChangeSet({ files: [] })).toBeUndefined();
  });
});

describe("touchChangeSet", () => {
  it("writes the entry's bytes back unchanged", () => {
    expect(touchChangeSet("api/telo.yaml", { content: "a2luZDogeA==", size: 7 })).toEqual({
      write: [{ path: "api/telo.yaml", content: "a2luZDogeA==", encoding: "base64" }],
    });
  });
});
