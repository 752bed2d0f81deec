{{- define "tailor-heart.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "tailor-heart.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tailor-heart.labels" -}}
{{ include "tailor-heart.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "tailor-heart.lease" -}}
{{- default (include "tailor-heart.fullname" .) .Values.leaderElection.lease -}}
{{- end -}}

{{- define "tailor-heart.stateConfigMap" -}}
{{- default (printf "%s-state" (include "tailor-heart.fullname" .)) .Values.stateConfigMap -}}
{{- end -}}
