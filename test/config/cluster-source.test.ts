import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clusterSource } from "../../src/config/cluster-source.ts";

describe("clusterSource", () => {
  const home = mkdtempSync(join(tmpdir(), "cluster-source-"));
  const kubeconfig = join(home, "config");
  writeFileSync(kubeconfig, "apiVersion: v1\n");

  it("is in-cluster in a pod, whatever the kubeconfig says", () => {
    expect(clusterSource({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBECONFIG: join(home, "missing") })).toBe("in-cluster");
  });

  it("is the kubeconfig when one of KUBECONFIG's files exists", () => {
    expect(clusterSource({ KUBECONFIG: `${join(home, "missing")}:${kubeconfig}`, HOME: home })).toBe("kubeconfig");
    expect(clusterSource({ KUBECONFIG: join(home, "missing"), HOME: home })).toBeUndefined();
  });

  it("looks for ~/.kube/config when KUBECONFIG is unset or blank, and finds nothing in an empty home", () => {
    expect(clusterSource({ HOME: home })).toBeUndefined();
    expect(clusterSource({ KUBECONFIG: " ", KUBERNETES_SERVICE_HOST: "", HOME: home })).toBeUndefined();
    const withKube = mkdtempSync(join(tmpdir(), "cluster-source-home-"));
    mkdirSync(join(withKube, ".kube"));
    writeFileSync(join(withKube, ".kube", "config"), "apiVersion: v1\n");
    expect(clusterSource({ KUBECONFIG: "", HOME: withKube })).toBe("kubeconfig");
  });
});
