{{/* The chart's name, as the app.kubernetes.io/name label carries it. */}}
{{- define "telo.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's object names: the release name when it already contains the chart's name (the
default `telo-k8s-runner` release gives the kustomize install's names), else
<release>-<chart>. Two releases in one namespace therefore never share a name.
*/}}
{{- define "telo.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "telo.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "telo.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
A name of at most 63 characters from a longer one: cut, with a hash of the whole so that two
long names that share a beginning still differ. Used where both the release name and its
namespace go into one name (cluster-scoped objects, the owner identity).
*/}}
{{- define "telo.fit63" -}}
{{- if le (len .) 63 }}{{ . }}
{{- else }}{{ printf "%s-%s" (trunc 50 . | trimSuffix "-" | trimSuffix ".") (sha256sum . | trunc 12) }}
{{- end }}
{{- end }}

{{/* The labels every object carries. */}}
{{- define "telo.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "telo.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* What the release's Deployment, Service, budget and policy select its runner pods by. */}}
{{- define "telo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "telo.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The session namespace: env.RUNNER_SESSION_NAMESPACE if values set it (the objects follow the
variable the runner reads), else sessionNamespace, else <fullname>-sessions, so that a second
release gets a namespace of its own.
*/}}
{{- define "telo.sessionNamespace" -}}
{{- .Values.env.RUNNER_SESSION_NAMESPACE | default .Values.sessionNamespace | default (include "telo.fit63" (printf "%s-sessions" (include "telo.fullname" .))) }}
{{- end }}

{{/* The build namespace, chosen as the session namespace is: <fullname>-builds by default. */}}
{{- define "telo.buildNamespace" -}}
{{- .Values.env.RUNNER_BUILD_NAMESPACE | default .Values.build.namespace | default (include "telo.fit63" (printf "%s-builds" (include "telo.fullname" .))) }}
{{- end }}

{{/*
The runner's ownership identity (RUNNER_OWNER_ID, docs/ownership.md): the release's namespace
and name, unique in the cluster, so two releases never adopt, pool or reap each other's pods
even when they share a session namespace.
*/}}
{{- define "telo.ownerId" -}}
{{- include "telo.fit63" (printf "%s.%s" .Release.Namespace .Release.Name) }}
{{- end }}

{{/* The label session pods carry and the session NetworkPolicy selects (RUNNER_MANAGED_BY). */}}
{{- define "telo.managedBy" -}}
{{- .Values.env.RUNNER_MANAGED_BY | default "telo-k8s-runner" }}
{{- end }}

{{/* Ports from the env the runner reads, so that a values change of PORT moves every use. */}}
{{- define "telo.apiPort" -}}{{ .Values.env.PORT | default 8062 | int }}{{- end }}
{{- define "telo.bundlePort" -}}{{ .Values.env.RUNNER_BUNDLE_PORT | default 8063 | int }}{{- end }}

{{/*
The runner env: what each enabled feature sets (as the components do), then the values' env
over it, so an operator's entry always wins over the chart's own.
*/}}
{{- define "telo.env" -}}
{{- $env := dict "RUNNER_SESSION_NAMESPACE" (include "telo.sessionNamespace" .) "RUNNER_OWNER_ID" (include "telo.ownerId" .) -}}
{{- $_ := set $env "SESSION_ROUTING_MODE" (.Values.routing.layer | default "auto") -}}
{{- if .Values.gateway.create }}
{{- $_ := set $env "SESSION_GATEWAY_NAME" .Values.gateway.name -}}
{{- $_ := set $env "SESSION_GATEWAY_NAMESPACE" (include "telo.sessionNamespace" .) -}}
{{- $_ := set $env "SESSION_GATEWAY_SECTION_NAME" .Values.gateway.listenerName -}}
{{- end -}}
{{- if .Values.build.enabled }}{{ $_ := set $env "RUNNER_BUILD_NAMESPACE" (include "telo.buildNamespace" .) }}{{ end -}}
{{- if .Values.terms.enabled }}{{ $_ := set $env "RUNNER_TERMS_FILE" "/etc/telo/terms/terms.md" }}{{ end -}}
{{- $_ := set $env "RUNNER_WATCH_SESSIONS" (ternary "true" "false" .Values.watch.enabled) -}}
{{- range $name, $value := .Values.env }}{{ $_ := set $env $name $value }}{{ end -}}
{{- range $name, $value := $env }}
{{ $name }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* The data plane's namespace for the routing layer. */}}
{{- define "telo.dataPlaneNamespace" -}}
{{- if .Values.routing.dataPlaneNamespace }}{{ .Values.routing.dataPlaneNamespace }}
{{- else if eq .Values.routing.layer "ingress" }}ingress-nginx
{{- else if eq .Values.routing.layer "gateway" }}envoy-gateway-system
{{- end }}
{{- end }}

{{/* The Secret RUNNER_APPS comes from. */}}
{{- define "telo.appsSecret" -}}
{{- .Values.appsCatalog.existingSecret | default (printf "%s-apps" (include "telo.fullname" .)) }}
{{- end }}
