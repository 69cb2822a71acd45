{{/*
Name of every namespaced and cluster-scoped object of the release; the
ClusterRoles and their bindings add a suffix naming the capability.
*/}}
{{- define "cpm.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cpm.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end -}}

{{- define "cpm.labels" -}}
{{ include "cpm.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: clusterprofile-bundle
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
The user the manager's requests come as; RBAC subjects and the Secret
admission policy name it.
*/}}
{{- define "cpm.serviceAccountUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "cpm.fullname" . }}
{{- end -}}

{{/* The --feature-gates value: every gate spelt out, on or off. */}}
{{- define "cpm.featureGates" -}}
{{- $g := .Values.featureGates -}}
ClusterProfile={{ $g.clusterProfile }},ClusterProfileAccessProvider={{ $g.clusterProfileAccessProvider }},ClusterProfileCredSyncer={{ $g.clusterProfileCredSyncer }},ClusterProfileDirectAccess={{ $g.clusterProfileDirectAccess }},ClusterProfileAgent={{ $g.clusterProfileAgent }}
{{- end -}}

{{/*
The ClusterRoleBinding that gives the ClusterRole of the same name to the
manager. Call with (dict "root" $ "suffix" "mirror").
*/}}
{{- define "cpm.clusterRoleBinding" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "cpm.fullname" .root }}-{{ .suffix }}
  labels:
    {{- include "cpm.labels" .root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "cpm.fullname" .root }}-{{ .suffix }}
subjects:
- kind: ServiceAccount
  name: {{ include "cpm.fullname" .root }}
  namespace: {{ .root.Release.Namespace | quote }}
{{- end -}}

{{/* The image of the manager, and of the agent it deploys on managed clusters. */}}
{{- define "cpm.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
