/**
 * The dependency key of a bundle (docs/kubernetes.md "Image builds") and the image tag derived from it
 * (docs/kubernetes.md "Image builds"): a built image depends on the base image and on what `telo install`
 * resolves — imports and controllers — not on resource bodies, so a body-only edit reuses it.
 */
import { createHash } from "node:crypto";
import { parseAllDocuments } from "yaml";
import type { BundleFile } from "../../contract/wire.ts";

export interface DependencyKey {
  /** `imports:` sources of every Telo.Application / Telo.Library document, sorted, unique. */
  importSources: string[];
  /** String `controllers:` of every Telo.Definition document, sorted, unique. */
  controllerLocators: string[];
  /**
   * The key cannot describe the bundle's dependencies: a file or document did not parse, or a
   * Definition builds its controller from bundle-local source (`local_path`). The tag then
   * covers every file's contents.
   */
  fullContentFallback: boolean;
}

const MODULE_KINDS = new Set(["Telo.Application", "Telo.Library"]);

function fileBytes(file: BundleFile): Buffer {
  return Buffer.from(file.contents, file.encoding === "base64" ? "base64" : "utf8");
}

/** The file as text, or undefined for bytes that are not UTF-8 (which no manifest can be). */
function fileText(file: BundleFile): string | undefined {
  if (file.encoding !== "base64") return file.contents;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(fileBytes(file));
  } catch {
    return undefined;
  }
}

function importSource(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  const source = value !== null && typeof value === "object" ? (value as { source?: unknown }).source : undefined;
  return typeof source === "string" ? source : undefined;
}

/** Top-level mapping values of every document of `text`; undefined when any does not parse. */
function documents(text: string): Array<Record<string, unknown>> | undefined {
  const parsed = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) return undefined;
    const value: unknown = document.toJS();
    if (value !== null && typeof value === "object" && !Array.isArray(value)) parsed.push(value as Record<string, unknown>);
  }
  return parsed;
}

/** A shallow parse of every file: no module graph, no network. */
export function extractDependencyKey(files: readonly BundleFile[]): DependencyKey {
  const importSources = new Set<string>();
  const controllerLocators = new Set<string>();
  let fullContentFallback = false;

  for (const file of files) {
    const text = fileText(file);
    if (text === undefined) continue;
    let docs: Array<Record<string, unknown>> | undefined;
    try {
      docs = documents(text);
    } catch {
      docs = undefined;
    }
    if (docs === undefined) {
      fullContentFallback = true;
      continue;
    }
    for (const doc of docs) {
      if (MODULE_KINDS.has(doc.kind as string) && doc.imports !== null && typeof doc.imports === "object") {
        for (const value of Object.values(doc.imports)) {
          const source = importSource(value);
          if (source !== undefined) importSources.add(source);
        }
      }
      if (doc.kind === "Telo.Definition") {
        if (Array.isArray(doc.controllers)) {
          for (const controller of doc.controllers) if (typeof controller === "string") controllerLocators.add(controller);
        }
        if (typeof doc.local_path === "string") fullContentFallback = true;
      }
    }
  }

  return {
    importSources: [...importSources].sort(),
    controllerLocators: [...controllerLocators].sort(),
    fullContentFallback,
  };
}

export interface ImageTagInput {
  baseImage: string;
  /** Only when resolved (pull policy `always`): a moved base tag then means a new image. */
  baseDigest?: string;
  files: readonly BundleFile[];
}

/**
 * The first 32 hex of a SHA-256 over labelled, NUL-separated inputs: base image, base digest,
 * imports, controllers and, on fallback, every file (sorted by path). The entry path is not an
 * input. (The module-registry input of ≤0.12 is gone with the registry.)
 */
export function imageTag(input: ImageTagInput): string {
  const key = extractDependencyKey(input.files);
  const hash = createHash("sha256");
  const field = (...parts: Array<string | Buffer>) => {
    for (const part of parts) hash.update(part).update("\0");
  };
  field("base", input.baseImage);
  if (input.baseDigest !== undefined) field("base-digest", input.baseDigest);
  for (const source of key.importSources) field("import", source);
  for (const locator of key.controllerLocators) field("controller", locator);
  if (key.fullContentFallback) {
    const byPath = (a: BundleFile, b: BundleFile) => (a.relativePath < b.relativePath ? -1 : a.relativePath > b.relativePath ? 1 : 0);
    for (const file of [...input.files].sort(byPath)) field("file", file.relativePath, fileBytes(file));
  }
  return hash.digest("hex").slice(0, 32);
}
