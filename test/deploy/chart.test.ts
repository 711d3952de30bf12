/**
 * The Helm chart renders the same objects as the kustomize install: `helm template` with the
 * chart's defaults equals k8s/base, and with ci/<overlay>-values.yaml equals that overlay,
 * object for object, so the two installs cannot drift.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { comparable, differences, helmBinary, helmTemplate } from "./helm.ts";
import { OVERLAYS, REPO_ROOT, render, runnerDeployment } from "./render.ts";

let helm: string;

// A cold build of helm takes minutes on two cores; the cache makes every later run instant.
beforeAll(() => {
  helm = helmBinary();
}, 30 * 60_000);

describe("helm chart", () => {
  it("renders k8s/base with its default values", () => {
    expect(differences(comparable(render("base")), comparable(helmTemplate(helm, undefined)))).toEqual([]);
  });

  for (const overlay of OVERLAYS) {
    it(`renders overlay ${overlay} with ci/${overlay}-values.yaml`, () => {
      const chart = helmTemplate(helm, `k8s/chart/ci/${overlay}-values.yaml`);
      expect(differences(comparable(render(`overlays/${overlay}`)), comparable(chart))).toEqual([]);
    });
  }

  it("labels every object as managed by Helm and rolls the pod when its configuration changes", () => {
    const objects = helmTemplate(helm, "k8s/chart/ci/example-values.yaml");
    for (const o of objects) expect(o.metadata.labels?.["app.kubernetes.io/managed-by"], o.metadata.name).toBe("Helm");
    const annotations = (values: string) =>
      (runnerDeployment(helmTemplate(helm, values)).spec.template.metadata as { annotations?: Record<string, string> }).annotations ?? {};
    const checksums = Object.keys(annotations("k8s/chart/ci/example-values.yaml")).filter((key) => key.startsWith("checksum/"));
    expect(checksums.sort()).toEqual(["checksum/apps", "checksum/env", "checksum/terms"]);
    expect(annotations("k8s/chart/ci/plain-values.yaml")).not.toEqual(annotations("k8s/chart/ci/build-values.yaml"));
  });

  it("takes the apps catalog from an existing Secret and creates none", () => {
    const objects = helmTemplate(helm, "k8s/chart/ci/example-values.yaml", ["appsCatalog.existingSecret=my-catalog"]);
    expect(objects.filter((o) => o.kind === "Secret")).toEqual([]);
    const deployment = runnerDeployment(objects);
    for (const container of deployment.spec.template.spec.containers) {
      expect(container.env?.[0]).toEqual({ name: "RUNNER_APPS", valueFrom: { secretKeyRef: { name: "my-catalog", key: "RUNNER_APPS" } } });
    }
  });

  it("renders the single-replica install with replicas: 1: Recreate, no replica settings, the bundle URL through the Service", () => {
    const deployment = runnerDeployment(helmTemplate(helm, undefined, ["replicas=1"]));
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
    for (const container of deployment.spec.template.spec.containers) {
      expect(container.env).toEqual([{ name: "RUNNER_SELF_URL", value: "http://telo-k8s-runner.telo-runner.svc:8063" }]);
      expect(container.ports?.map((port) => port.name)).not.toContain("peer");
    }
  });

  it("passes helm lint --strict with every values file", () => {
    for (const values of [undefined, ...OVERLAYS.map((o) => `k8s/chart/ci/${o}-values.yaml`)]) {
      const args = ["lint", "--strict", "k8s/chart", ...(values ? ["-f", values] : [])];
      expect(() => execFileSync(helm, args, { cwd: REPO_ROOT, stdio: "pipe" }), values ?? "defaults").not.toThrow();
    }
  });

  it("carries the package version as chart, app and image version", () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    const chart = parse(readFileSync(join(REPO_ROOT, "k8s/chart/Chart.yaml"), "utf8")) as { version: string; appVersion: string };
    const values = parse(readFileSync(join(REPO_ROOT, "k8s/chart/values.yaml"), "utf8")) as { image: { tag: string } };
    expect([chart.version, chart.appVersion, values.image.tag]).toEqual([version, version, version]);
  });
});
