{{/* The chart's name, or nameOverride. */}}
{{- define "mcp-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full name of every object: fullnameOverride, or the release name when it
already contains the chart's name (a release called mcp-gateway gives the
names deploy/kubernetes uses), or release-chart.
*/}}
{{- define "mcp-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "mcp-gateway.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mcp-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: gateway
{{- end }}

{{- define "mcp-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mcp-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mcp-gateway.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{- define "mcp-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcp-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mcp-gateway.catalogConfigMap" -}}
{{- default (printf "%s-catalog" (include "mcp-gateway.fullname" .)) .Values.catalog.existingConfigMap }}
{{- end }}

{{/* The smallest number of replicas the Deployment runs. */}}
{{- define "mcp-gateway.minReplicas" -}}
{{- if .Values.autoscaling.enabled }}{{ .Values.autoscaling.minReplicas | int }}{{ else }}{{ .Values.replicaCount | int }}{{ end }}
{{- end }}

{{/*
Checks of values the API server would accept but that break the gateway,
each failing the render with what was wrong.
*/}}
{{- define "mcp-gateway.validate" -}}
{{- if and .Values.catalog.content .Values.catalog.existingConfigMap }}
{{- fail "catalog: set content or existingConfigMap, not both" }}
{{- end }}
{{- if not .Values.catalog.key }}
{{- fail "catalog.key: the ConfigMap key holding the catalog must not be empty" }}
{{- end }}
{{- range $i, $e := .Values.secrets.env }}
{{- if not $e.name }}
{{- fail (printf "secrets.env[%d]: name (the environment variable) is required" $i) }}
{{- end }}
{{- end }}
{{- with .Values.redis }}
{{- if and .url .existingSecret }}
{{- fail "redis: set url or existingSecret, not both" }}
{{- end }}
{{- if and .url (not (regexMatch "^rediss?://" .url)) }}
{{- fail (printf "redis.url %q: want redis://host:port/db or rediss://..." .url) }}
{{- end }}
{{- if regexMatch "^rediss?://[^/@]*@" .url }}
{{- fail "redis.url carries credentials: put the whole URL in a Secret and name it in redis.existingSecret and redis.existingSecretKey" }}
{{- end }}
{{- if and (or .url .existingSecret) (not .env) }}
{{- fail "redis.env: name at least one variable to give the Redis URL in (GATEWAY_APPROVAL_STORE)" }}
{{- end }}
{{- end }}
{{- if .Values.autoscaling.enabled }}
{{- if lt (.Values.autoscaling.minReplicas | int) 1 }}
{{- fail "autoscaling.minReplicas: at least 1" }}
{{- end }}
{{- if gt (.Values.autoscaling.minReplicas | int) (.Values.autoscaling.maxReplicas | int) }}
{{- fail (printf "autoscaling: minReplicas %d is above maxReplicas %d" (.Values.autoscaling.minReplicas | int) (.Values.autoscaling.maxReplicas | int)) }}
{{- end }}
{{- end }}
{{- if .Values.podDisruptionBudget.enabled }}
{{- $min := include "mcp-gateway.minReplicas" . | int }}
{{- $avail := .Values.podDisruptionBudget.minAvailable }}
{{- if and (kindIs "string" $avail) (hasSuffix "%" $avail) }}
{{- else if ge ($avail | int) $min }}
{{- fail (printf "podDisruptionBudget.minAvailable %v with as few as %d replicas: no pod could ever be evicted and node drains would block; want it below the replica count" $avail $min) }}
{{- end }}
{{- end }}
{{- end }}
