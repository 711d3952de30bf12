/**
 * The build context of the image build path (docs/kubernetes.md "Image builds"): the bundle plus a generated
 * Dockerfile at its root that installs the application's module closure into the image.
 */
import type { BundleFile } from "../../contract/wire.ts";

export const DOCKERFILE_PATH = "Dockerfile";

export interface DockerfileInput {
  baseImage: string;
  /** The base tag's digest when it was resolved (pull policy `always`); it is part of the tag. */
  baseDigest?: string;
  entryRelativePath: string;
}

/**
 * The base reference an image is built FROM. A resolved digest is pinned so the image really
 * is built from the base its tag was computed over, not whatever the tag points to later.
 */
function fromReference(baseImage: string, baseDigest: string | undefined): string {
  if (baseDigest === undefined || baseImage.includes("@")) return baseImage;
  return `${baseImage}@${baseDigest}`;
}

/**
 * The Dockerfile text, trailing newline included. The install step uses the exec form with a
 * JSON-encoded path so an entry path is never interpreted by a shell. The module registry
 * build-arg of ≤0.12 is gone (the registry was removed in 0.13).
 */
export function dockerfile(input: DockerfileInput): string {
  return [
    `FROM ${fromReference(input.baseImage, input.baseDigest)}`,
    "WORKDIR /app",
    "COPY . /app",
    "ENV TELO_CACHE_DIR=/telo-cache",
    `RUN ${JSON.stringify(["telo", "install", `/app/${input.entryRelativePath}`])}`,
    "",
  ].join("\n");
}

/** The bundle with the generated Dockerfile at its root (a bundle file of that name yields). */
export function buildContextFiles(files: readonly BundleFile[], dockerfileText: string): BundleFile[] {
  return [
    ...files.filter((file) => file.relativePath !== DOCKERFILE_PATH),
    { relativePath: DOCKERFILE_PATH, contents: dockerfileText },
  ];
}
