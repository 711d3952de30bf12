import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import {
  restoreChangeSet,
  seedChangeSet,
  touchChangeSet,
  WORKSPACE_MARKER,
  WORKSPACE_MARKER_PATH,
} from "../../../src/kube/session/workspace-seed.ts";

describe("seedChangeSet", () => {
  it("writes every bundle file, utf8 unless said otherwise, and adds the marker", () => {
    expect(
      seedChangeSet([
        { relativePath: "api/telo.yaml", contents: "kind: Telo.Application\n" },
        { relativePath: "logo.png", contents: "iVBORw0KGgo=", encoding: "base64" },
      ]),
    ).toEqual({
      write: [
        { path: "api/telo.yaml", content: "kind: Telo.Application\n", encoding: "utf8" },
        { path: "logo.png", content: "iVBORw0KGgo=", encoding: "base64" },
        { path: "telo-workspace.yaml", content: WORKSPACE_MARKER, encoding: "utf8" },
      ],
    });
  });

  it("keeps the bundle's own marker", () => {
    expect(seedChangeSet([{ relativePath: WORKSPACE_MARKER_PATH, contents: "modules: [api]\n" }])).toEqual({
      write: [{ path: "telo-workspace.yaml", content: "modules: [api]\n", encoding: "utf8" }],
    });
  });

  it("marks every module as shared", () => {
    expect(parse(WORKSPACE_MARKER)).toEqual({ modules: ["*"] });
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
