/**
 * The monitoring objects (component monitoring, the chart's monitoring.*): off by default in
 * both installs, the same objects in both when on, a ServiceMonitor that selects the runner's
 * Service and port, a dashboard the Grafana sidecar loads, and every alert's runbook in
 * docs/monitoring.md.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chartAsKustomize, comparable, differences, helmTemplate, kustomizeAsChart } from "../deploy/helm.ts";
import { type K8sObject, find, one, REPO_ROOT, render, TARGETS } from "../deploy/render.ts";
import { chartObjects, dashboard, helmPath, MONITORING_VALUES, overlayObjects, ruleGroups } from "./render.ts";

const MONITORING_KINDS = ["ServiceMonitor", "PrometheusRule"];
const isMonitoring = (o: K8sObject) => MONITORING_KINDS.includes(o.kind) || o.metadata.labels?.grafana_dashboard !== undefined;

describe("monitoring in the installs", () => {
  it("is off by default: no overlay but monitoring, and no chart without monitoring.enabled, renders it", () => {
    for (const target of TARGETS) expect(render(target).filter(isMonitoring), target).toEqual([]);
    expect(helmTemplate(helmPath(), undefined).filter(isMonitoring)).toEqual([]);
    expect(helmTemplate(helmPath(), "k8s/chart/ci/example-values.yaml").filter(isMonitoring)).toEqual([]);
  });

  it("renders the same objects in the overlay monitoring and the chart with ci/monitoring-values.yaml", () => {
    const overlay = overlayObjects();
    expect(overlay.filter(isMonitoring).map((o) => o.kind).sort()).toEqual(["ConfigMap", "PrometheusRule", "ServiceMonitor"]);
    expect(differences(comparable(kustomizeAsChart(overlay)), comparable(chartAsKustomize(chartObjects())))).toEqual([]);
  });

  it("passes helm lint --strict with monitoring on, and turns each part off on its own", () => {
    execFileSync(helmPath(), ["lint", "--strict", "k8s/chart", "--namespace", "telo-runner", "-f", MONITORING_VALUES], { cwd: REPO_ROOT, stdio: "pipe" });
    for (const [part, kind] of [["serviceMonitor", "ServiceMonitor"], ["rules", "PrometheusRule"], ["dashboard", "ConfigMap"]] as const) {
      const kinds = chartObjects([`monitoring.${part}.enabled=false`]).filter(isMonitoring).map((o) => o.kind);
      expect(kinds, part).not.toContain(kind);
      expect(kinds, part).toHaveLength(2);
    }
  });

  it("refuses monitoring values the templates cannot use (values.schema.json)", () => {
    for (const set of ["monitoring.serviceMonitor.interval=soon", "monitoring.alerts=true", "monitoring.rules.labels.release.x=y"]) {
      expect(() => chartObjects([set]), set).toThrow(/values don't meet the specifications of the schema/);
    }
  });

  it("adds the chart's extra labels (a Prometheus selecting by release) to each object", () => {
    const objects = chartObjects(["monitoring.serviceMonitor.labels.release=prom", "monitoring.rules.labels.release=prom", "monitoring.dashboard.labels.team=runner"]);
    expect(one(objects, "ServiceMonitor").metadata.labels?.release).toBe("prom");
    expect(one(objects, "PrometheusRule").metadata.labels?.release).toBe("prom");
    expect(objects.find((o) => o.metadata.labels?.team === "runner")?.kind).toBe("ConfigMap");
  });

  it("scrapes /metrics on the api port of the runner's own Service, in both installs and for any release", () => {
    const releases = [overlayObjects(), chartObjects(), helmTemplate(helmPath(), MONITORING_VALUES, [], { name: "prod", namespace: "telo" })];
    for (const objects of releases) {
      type Monitor = K8sObject & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string; path: string }> } };
      type Service = K8sObject & { spec: { ports: Array<{ name: string }> } };
      const monitor = one(objects, "ServiceMonitor") as Monitor;
      const services = find(objects, "Service") as Service[];
      const selected = services.filter((s) => Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v));
      expect(selected.map((s) => s.metadata.name)).toEqual([services[0]!.metadata.name]);
      expect(selected[0]!.metadata.namespace).toBe(monitor.metadata.namespace);
      expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: "http", path: "/metrics" })]);
      expect(selected[0]!.spec.ports.map((p) => p.name)).toContain("http");
    }
  });

  it("ships a dashboard the Grafana sidecar loads: one JSON file with a fixed uid and a query in every panel", () => {
    const board = dashboard(overlayObjects());
    expect(board.uid).toBe("telo-k8s-runner");
    const graphs = board.panels.filter((panel) => panel.type !== "row");
    expect(graphs.length).toBeGreaterThan(10);
    for (const panel of graphs) expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
  });
});

describe("the alerts' runbooks", () => {
  const page = readFileSync(join(REPO_ROOT, "docs/monitoring.md"), "utf8");
  const headings = new Set([...page.matchAll(/^### (\S+)$/gm)].map((m) => m[1]!));

  it("each alert names a severity and a runbook in docs/monitoring.md, a heading of its own name that says what to check and do", () => {
    const rules = ruleGroups(overlayObjects()).groups.flatMap((group) => group.rules);
    expect(rules.length).toBeGreaterThanOrEqual(6);
    for (const rule of rules) {
      const name = rule.alert!;
      expect(["warning", "critical"], name).toContain(rule.labels?.severity);
      expect(rule.annotations?.runbook_url, name).toMatch(new RegExp(`/docs/monitoring\\.md#${name.toLowerCase()}$`));
      expect(headings, name).toContain(name);
      const section = page.split(`### ${name}\n`)[1]!.split(/^#{2,3} /m)[0]!;
      for (const part of ["What it means", "What to check", "What to do"]) expect(section, `${name}: ${part}`).toContain(`**${part}**`);
    }
    expect([...headings].sort()).toEqual(rules.map((rule) => rule.alert!).sort());
  });
});
