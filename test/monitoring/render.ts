/**
 * What the monitoring tests read from both installs: the overlay monitoring (kustomize) and the
 * chart with ci/monitoring-values.yaml, and the alert rules and dashboard queries in them.
 */
import { helmBinary, helmTemplate, KUSTOMIZE_NAMES } from "../deploy/helm.ts";
import { type K8sObject, one, render } from "../deploy/render.ts";

export const MONITORING_VALUES = "k8s/chart/ci/monitoring-values.yaml";

let helm: string | undefined;

/** The helm binary (built on first use by test/deploy/helm.sh). */
export function helmPath(): string {
  helm ??= helmBinary();
  return helm;
}

export function overlayObjects(): K8sObject[] {
  return render("overlays/monitoring");
}

export function chartObjects(sets: string[] = []): K8sObject[] {
  return helmTemplate(helmPath(), MONITORING_VALUES, [...KUSTOMIZE_NAMES, ...sets]);
}

export type Rule = { alert?: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
export type RuleGroups = { groups: Array<{ name: string; rules: Rule[] }> };

/** The PrometheusRule's spec: a Prometheus rules file as promtool reads it. */
export function ruleGroups(objects: K8sObject[]): RuleGroups {
  return (one(objects, "PrometheusRule") as K8sObject & { spec: RuleGroups }).spec;
}

export type Dashboard = {
  uid: string;
  panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ name: string; query?: string | { query: string } }> };
};

/** The dashboard JSON in the ConfigMap labelled for Grafana's sidecar. */
export function dashboard(objects: K8sObject[]): Dashboard {
  const configMap = objects.find((o) => o.kind === "ConfigMap" && o.metadata.labels?.grafana_dashboard === "1") as (K8sObject & { data: Record<string, string> }) | undefined;
  if (!configMap) throw new Error("no ConfigMap labelled grafana_dashboard=1");
  const files = Object.values(configMap.data);
  if (files.length !== 1) throw new Error(`the dashboard ConfigMap holds ${files.length} files`);
  return JSON.parse(files[0]!) as Dashboard;
}

/** Every PromQL expression of the dashboard: panel queries and variable queries. */
export function dashboardQueries(board: Dashboard): string[] {
  const panels = board.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  const variables = board.templating.list.flatMap((variable) => (typeof variable.query === "object" ? [variable.query.query] : []));
  return [...panels, ...variables];
}
