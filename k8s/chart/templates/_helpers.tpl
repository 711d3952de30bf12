{{/* The labels every object carries, as the kustomize overlays put them (selectors untouched). */}}
{{- define "telo.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/name: telo-k8s-runner
{{- end }}

{{/* The runner env: the values' env plus what each enabled feature sets (as the components do). */}}
{{- define "telo.env" -}}
{{- $env := deepCopy .Values.env -}}
{{- if eq .Values.routing.layer "ingress" }}{{ $_ := set $env "SESSION_ROUTING_MODE" "ingress" }}{{ end -}}
{{- if eq .Values.routing.layer "gateway" }}{{ $_ := set $env "SESSION_ROUTING_MODE" "gateway" }}{{ end -}}
{{- if .Values.build.enabled }}{{ $_ := set $env "RUNNER_BUILD_NAMESPACE" "telo-builds" }}{{ end -}}
{{- if .Values.terms.enabled }}{{ $_ := set $env "RUNNER_TERMS_FILE" "/etc/telo/terms/terms.md" }}{{ end -}}
{{- $_ := set $env "RUNNER_WATCH_SESSIONS" (ternary "true" "false" .Values.watch.enabled) -}}
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
{{- .Values.appsCatalog.existingSecret | default "telo-k8s-runner-apps" }}
{{- end }}
