import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { BundleFile } from "../../../src/contract/wire.ts";
import { extractDependencyKey, imageTag } from "../../../src/kube/build/dependency-key.ts";

const APP = `kind: Telo.Application
metadata:
  name: hello
imports:
  Http: pkg:npm/@telorun/http-server@1.2.0
  Fs:
    source: pkg:npm/@telorun/fs@0.4.1
  Broken: { version: 3 }
---
kind: Http.Server
metadata:
  name: server
port: 8080
`;

const LIBRARY = `kind: Telo.Library
metadata:
  name: shared
imports:
  Http: pkg:npm/@telorun/http-server@1.2.0
  Run: pkg:npm/@telorun/run@0.9.0
`;

const DEFINITION = `kind: Telo.Definition
metadata:
  name: Greeter
controllers:
  - pkg:npm/@acme/greeter@2.0.0
  - { not: a string }
  - pkg:npm/@acme/greeter-rs@2.0.0
`;

const bundle = (...files: Array<[string, string]>): BundleFile[] =>
  files.map(([relativePath, contents]) => ({ relativePath, contents }));

describe("extractDependencyKey", () => {
  it("collects imports of modules and controllers of definitions across files and documents", () => {
    expect(extractDependencyKey(bundle(["telo.yaml", APP], ["lib/telo.yaml", LIBRARY], ["defs.yaml", DEFINITION]))).toEqual({
      importSources: ["pkg:npm/@telorun/fs@0.4.1", "pkg:npm/@telorun/http-server@1.2.0", "pkg:npm/@telorun/run@0.9.0"],
      controllerLocators: ["pkg:npm/@acme/greeter-rs@2.0.0", "pkg:npm/@acme/greeter@2.0.0"],
      fullContentFallback: false,
    });
  });

  it("ignores imports outside module documents and controllers outside definitions", () => {
    const stray = "kind: Http.Server\nimports:\n  X: pkg:npm/x@1.0.0\ncontrollers: [pkg:npm/y@1.0.0]\n";
    expect(extractDependencyKey(bundle(["a.yaml", stray]))).toEqual({
      importSources: [],
      controllerLocators: [],
      fullContentFallback: false,
    });
  });

  it("falls back to full content for a bundle-local controller", () => {
    const local = "kind: Telo.Definition\nmetadata:\n  name: Local\nlocal_path: ./controllers/local.ts\n";
    expect(extractDependencyKey(bundle(["local.yaml", local])).fullContentFallback).toBe(true);
  });

  it("falls back to full content when a document does not parse", () => {
    const broken = "kind: Telo.Application\nimports: [unclosed\n";
    expect(extractDependencyKey(bundle(["telo.yaml", APP], ["broken.yaml", broken])).fullContentFallback).toBe(true);
  });

  it("reads a base64 manifest as its text, and skips binary files that cannot be manifests", () => {
    const files: BundleFile[] = [
      { relativePath: "telo.yaml", contents: Buffer.from(LIBRARY).toString("base64"), encoding: "base64" },
      { relativePath: "logo.png", contents: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe]).toString("base64"), encoding: "base64" },
    ];
    expect(extractDependencyKey(files)).toEqual({
      importSources: ["pkg:npm/@telorun/http-server@1.2.0", "pkg:npm/@telorun/run@0.9.0"],
      controllerLocators: [],
      fullContentFallback: false,
    });
  });
});

describe("imageTag", () => {
  const base = "telorun/node:0.14.0-slim";
  const files = bundle(["telo.yaml", APP]);

  it("is the first 32 hex of the labelled, NUL-separated inputs", () => {
    const expected = createHash("sha256")
      .update(
        [
          "base",
          base,
          "import",
          "pkg:npm/@telorun/fs@0.4.1",
          "import",
          "pkg:npm/@telorun/http-server@1.2.0",
          "",
        ].join("\0"),
      )
      .digest("hex")
      .slice(0, 32);
    expect(imageTag({ baseImage: base, files })).toBe(expected);
  });

  it("ignores body-only edits, the entry path and file names while the key holds", () => {
    const edited = bundle(["main.yaml", APP.replace("port: 8080", "port: 9090")]);
    expect(imageTag({ baseImage: base, files: edited })).toBe(imageTag({ baseImage: base, files }));
  });

  it("changes with the base image, its digest, an import or a controller", () => {
    const tag = imageTag({ baseImage: base, files });
    expect(imageTag({ baseImage: "telorun/node:0.15.0-slim", files })).not.toBe(tag);
    expect(imageTag({ baseImage: base, baseDigest: "sha256:" + "a".repeat(64), files })).not.toBe(tag);
    expect(imageTag({ baseImage: base, files: bundle(["telo.yaml", APP.replace("1.2.0", "1.3.0")]) })).not.toBe(tag);
    expect(imageTag({ baseImage: base, files: bundle(["telo.yaml", APP], ["d.yaml", DEFINITION]) })).not.toBe(tag);
  });

  it("covers every file, sorted by path, on fallback", () => {
    const local = "kind: Telo.Definition\nlocal_path: ./c.ts\n";
    const a = bundle(["b.yaml", local], ["a.ts", "export const v = 1;"]);
    const reordered = bundle(["a.ts", "export const v = 1;"], ["b.yaml", local]);
    const edited = bundle(["b.yaml", local], ["a.ts", "export const v = 2;"]);
    expect(imageTag({ baseImage: base, files: a })).toBe(imageTag({ baseImage: base, files: reordered }));
    expect(imageTag({ baseImage: base, files: a })).not.toBe(imageTag({ baseImage: base, files: edited }));
    const expected = createHash("sha256")
      .update(["base", base, "file", "a.ts", "export const v = 1;", "file", "b.yaml", local, ""].join("\0"))
      .digest("hex")
      .slice(0, 32);
    expect(imageTag({ baseImage: base, files: a })).toBe(expected);
  });
});
