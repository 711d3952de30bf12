/**
 * The runner's image as the Dockerfile's production stage defines it, written without Docker
 * (docs/deployment.md): node and its libraries, the production node_modules, the compiled
 * dist/ and package.json, with the Dockerfile's user, command, environment, ports and working
 * directory. test/deploy/image.test.ts holds the two to the same content.
 */
import { applicationLayer, dependencyLayer, runtimeLayer } from "./image-content.ts";
import { nodeCommand, nodeRuntimeEnvLines } from "../launch/node-runtime.ts";
import { imageArchive, type ImageArchive, type ImageConfig } from "./oci.ts";

/** The Node release of the image; the Dockerfile's NODE_IMAGE names the same one. */
export const NODE_VERSION = "v20.20.2";
/** The Dockerfile's TELO_SESSION_IMAGE default (RUNNER_IMAGE): the kernel sessions run. */
export const DEFAULT_SESSION_IMAGE = "telorun/node:latest-slim";

export function imageConfig(input: { sessionImage: string; version: string; provenance: string }): ImageConfig {
  return {
    user: "1000:1000",
    env: [
      // What the node base image sets, then the Dockerfile's own ENV lines.
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      `NODE_VERSION=${NODE_VERSION.slice(1)}`,
      "NODE_ENV=production",
      `RUNNER_IMAGE=${input.sessionImage}`,
      "PORT=8062",
      "RUNNER_BUNDLE_PORT=8063",
      ...nodeRuntimeEnvLines(),
    ],
    cmd: nodeCommand("dist/src/api/main.js"),
    workingDir: "/app",
    exposedPorts: ["8062/tcp", "8063/tcp"],
    labels: { "org.opencontainers.image.title": "k8s-runner", "org.opencontainers.image.version": input.version, "run.telo.node-runtime": input.provenance },
  };
}

export type ImageBuild = ImageArchive & { provenance: string };

/** The archive for `ref` from an already built `distDir`. */
export async function buildImage(input: { root: string; distDir: string; nodeBinary: string; ref: string; sessionImage: string; version: string }): Promise<ImageBuild> {
  const runtime = await runtimeLayer(input.nodeBinary, NODE_VERSION);
  const layers = [runtime.entries, await dependencyLayer(input.root), await applicationLayer(input.root, input.distDir)];
  const config = imageConfig({ sessionImage: input.sessionImage, version: input.version, provenance: runtime.provenance });
  const history = [`node ${NODE_VERSION} and its shared libraries, user ${config.user}`, "COPY /app/node_modules (npm ci --omit=dev)", "COPY /app/dist (npm run build) and package.json"];
  return { ...imageArchive({ ref: input.ref, layers, config, history }), provenance: runtime.provenance };
}
