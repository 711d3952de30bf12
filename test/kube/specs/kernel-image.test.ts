/** The kernel image of each container (src/kube/specs/kernel-image.ts, docs/telo-versions.md). */
import { describe, expect, it } from "vitest";
import { loadKubeConfig } from "../../../src/config/kube.ts";
import { kernelImage, teloImage } from "../../../src/kube/specs/kernel-image.ts";

const settings = loadKubeConfig({ RUNNER_SELF_URL: "http://runner", RUNNER_PULL_POLICY: "always", RUNNER_TELO_UNRELEASED_IMAGE: "acme/kernel:dev" }).kernelImages;
const images = { defaultImage: "telorun/node:latest-slim", telo: settings };
const app = (name: string, telo?: string) => ({ name, entryRelativePath: "telo.yaml", ports: [], io: "tty" as const, ...(telo !== undefined && { telo }) });

describe("kernelImage", () => {
  it("runs a version's image under RUNNER_PULL_POLICY, build metadata after '_', an unreleased identity the operator's image", () => {
    expect(teloImage("0.96.0", settings)).toBe("telorun/node:0.96.0-slim");
    expect(teloImage("0.97.0-rc.1+build.5", settings)).toBe("telorun/node:0.97.0-rc.1_build.5-slim");
    expect(teloImage("0.98.0+unreleased", settings)).toBe("acme/kernel:dev");
    expect(kernelImage({ config: {}, apps: [app("app", "0.96.0")] }, app("app", "0.96.0"), images)).toEqual({ image: "telorun/node:0.96.0-slim", imagePullPolicy: "Always" });
  });

  it("gives a watch session naming any version RUNNER_PULL_POLICY on every container, the workspace's included", () => {
    const session = { config: {}, apps: [app("web", "0.96.0"), app("api")] };
    expect(kernelImage(session, undefined, images)).toEqual({ image: "telorun/node:latest-slim", imagePullPolicy: "Always" });
    expect(kernelImage(session, session.apps[1], images)).toEqual({ image: "telorun/node:latest-slim", imagePullPolicy: "Always" });
  });

  it("keeps the config's image and pull policy when no app names a version", () => {
    expect(kernelImage({ config: {}, apps: [app("app")] }, app("app"), images)).toEqual({ image: "telorun/node:latest-slim", imagePullPolicy: "IfNotPresent" });
    expect(kernelImage({ config: { image: "x:1", pullPolicy: "never" }, apps: [app("app")] }, app("app"), { defaultImage: "d" })).toEqual({ image: "x:1", imagePullPolicy: "Never" });
  });
});
