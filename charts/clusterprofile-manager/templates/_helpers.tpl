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
ClusterProfile={{ $g.clusterProfile }},ClusterProfileAccessProvider={{ $g.clusterProfileAccessProvider }},ClusterProfileCredSyncer={{ $g.clusterProfileCredSyncer }},ClusterProfileDirectAccess={{ $g.clusterProfileDirectAccess }},ClusterProfileAgent={{ $g.clusterProfileAgent }},ClusterProfileMultiKueue={{ $g.clusterProfileMultiKueue }},ClusterProfileArgoCD={{ $g.clusterProfileArgoCD }},ClusterProfilePlacementDecision={{ $g.clusterProfilePlacementDecision }}
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

{{/*
A CRD of cluster-inventory-api from files/ (argument: dict "root" $ "file"
"multicluster.x-k8s.io_clusterprofiles.yaml"), as it is there but for the
chart's labels and helm.sh/resource-policy: keep, so that `helm uninstall`
and an upgrade that stops installing it leave it, and the objects in it, in
place.
*/}}
{{- define "cpm.keptCRD" -}}
{{- $crd := .root.Files.Get (printf "files/%s" .file) | fromYaml }}
{{- $annotations := merge (dict "helm.sh/resource-policy" "keep") ($crd.metadata.annotations | default dict) }}
{{- $labels := merge (include "cpm.labels" .root | fromYaml) ($crd.metadata.labels | default dict) }}
{{- $_ := set $crd.metadata "annotations" $annotations }}
{{- $_ := set $crd.metadata "labels" $labels }}
{{- toYaml $crd }}
{{- end -}}

{{/* The image of the manager, and of the agent it deploys on managed clusters. */}}
{{- define "cpm.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/*
What deciding membership reads (pkg/membership): which namespaces serve which
clusters, from ManagedClusters, ManagedClusterSets, their Bound bindings and
namespace metadata. Every capability that acts on a cluster's behalf in a
namespace (profiles, access entries, token copies) asks this, never a
profile's labels.
*/}}
{{- define "cpm.membershipRules" -}}
- apiGroups: ["cluster.open-cluster-management.io"]
  resources: ["managedclusters", "managedclustersets", "managedclustersetbindings"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get", "list", "watch"]
{{- end -}}

{{/*
What recognising an upstream twin reads (pkg/coexistence), as ClusterRole
rules: its ClusterManagementAddOn (admin-made, cluster-scoped) and, while
coexistence.reportDecoys is on, its manager Deployment's name in every
namespace (listed with a metadata.name field selector, which RBAC authorizes
by resourceNames). With reportDecoys off the Deployment is read only in the
upstream namespaces ("cpm.twinRoles"). Arguments: root, deployment, addon.
*/}}
{{- define "cpm.twinRules" -}}
- apiGroups: ["addon.open-cluster-management.io"]
  resources: ["clustermanagementaddons"]
  resourceNames: [{{ .addon | quote }}]
  verbs: ["get", "list", "watch"]
{{- if .root.Values.coexistence.reportDecoys }}
- apiGroups: ["apps"]
  resources: ["deployments"]
  resourceNames: [{{ .deployment | quote }}]
  verbs: ["get", "list", "watch"]
{{- end }}
{{- end -}}

{{/*
With coexistence.reportDecoys off: a Role and RoleBinding in each upstream
namespace to read the twin's manager Deployment there only. Arguments: root,
deployment, suffix.
*/}}
{{- define "cpm.twinRoles" -}}
{{- $root := .root -}}
{{- if not $root.Values.coexistence.reportDecoys }}
{{- range $root.Values.coexistence.upstreamNamespaces }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "cpm.fullname" $root }}-{{ $.suffix }}
  namespace: {{ . | quote }}
  labels:
    {{- include "cpm.labels" $root | nindent 4 }}
rules:
- apiGroups: ["apps"]
  resources: ["deployments"]
  resourceNames: [{{ $.deployment | quote }}]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "cpm.fullname" $root }}-{{ $.suffix }}
  namespace: {{ . | quote }}
  labels:
    {{- include "cpm.labels" $root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "cpm.fullname" $root }}-{{ $.suffix }}
subjects:
- kind: ServiceAccount
  name: {{ include "cpm.fullname" $root }}
  namespace: {{ $root.Release.Namespace | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
CEL: the Secret in the variable named by the argument ("object" or
"oldObject") is a synced token copy as the credential syncer writes it.
*/}}
{{- define "cpm.isSyncedCopy" -}}
{{- $o := . -}}
{{ $o }}.type == 'Opaque' &&
has({{ $o }}.metadata.labels) &&
'authentication.open-cluster-management.io/synced-from' in {{ $o }}.metadata.labels &&
{{ $o }}.metadata.labels['authentication.open-cluster-management.io/synced-from'] != '' &&
has({{ $o }}.metadata.annotations) &&
'authentication.open-cluster-management.io/synced-from-cluster' in {{ $o }}.metadata.annotations &&
'authentication.open-cluster-management.io/synced-from-managed-serviceaccount' in {{ $o }}.metadata.annotations &&
{{ $o }}.metadata.name == {{ $o }}.metadata.annotations['authentication.open-cluster-management.io/synced-from-cluster'] + '-' +
  {{ $o }}.metadata.annotations['authentication.open-cluster-management.io/synced-from-managed-serviceaccount'] &&
(!has({{ $o }}.data) || {{ $o }}.data.all(key, key in ['token', 'ca.crt']))
{{- end -}}

{{/*
CEL: the Secret in the variable named by the argument carries any mark of a
synced token copy (the label or either source annotation).
*/}}
{{- define "cpm.looksLikeSyncedCopy" -}}
{{- $o := . -}}
{{ $o }} != null && (
  (has({{ $o }}.metadata.labels) && 'authentication.open-cluster-management.io/synced-from' in {{ $o }}.metadata.labels) ||
  (has({{ $o }}.metadata.annotations) &&
    ('authentication.open-cluster-management.io/synced-from-cluster' in {{ $o }}.metadata.annotations ||
     'authentication.open-cluster-management.io/synced-from-managed-serviceaccount' in {{ $o }}.metadata.annotations)))
{{- end -}}

{{/*
CEL: the annotations the manager's syncer writes on a copy (its marks), as a
list literal.
*/}}
{{- define "cpm.copyMarks" -}}
['authentication.open-cluster-management.io/synced-from-cluster',
 'authentication.open-cluster-management.io/synced-from-managed-serviceaccount',
 'authentication.open-cluster-management.io/token-expiration',
 'clusterprofile.open-cluster-management.io/published-servers',
 'clusterprofile.open-cluster-management.io/unscoped',
 'clusterprofile.open-cluster-management.io/upstream-copy']
{{- end -}}

{{/*
CEL: the request's namespace is a ManagedCluster's own on the hub (OCM labels
it open-cluster-management.io/cluster-name). Whatever the label's value: the
policies that use this deny, and a deny must not hinge on a value.
*/}}
{{- define "cpm.inManagedClusterNamespace" -}}
namespaceObject != null && has(namespaceObject.metadata.labels) &&
'open-cluster-management.io/cluster-name' in namespaceObject.metadata.labels
{{- end -}}

{{/*
The chart's admission policy templates. Each renders its
ValidatingAdmissionPolicy and binding, or nothing while its gates are off.
The expected-policies ConfigMap and the RBAC that lets the manager and
`helm test` read them are built from this list, so a policy added here is
checked without more ado (and test/chart fails for one rendered but not
listed).
*/}}
{{- define "cpm.admissionPolicyTemplates" -}}
{{- list "secret-writes-policy.yaml" "token-copies-policy.yaml" "rbac-writes-policy.yaml" "publish-opt-out-policy.yaml" "profile-namespaces-policy.yaml" | toJson -}}
{{- end -}}

{{/*
Every admission policy and binding this release renders, as one YAML
stream: the very output of the templates that install them.
*/}}
{{- define "cpm.admissionPolicies" -}}
{{- range $file := include "cpm.admissionPolicyTemplates" . | fromJsonArray }}
{{- $rendered := include (printf "%s/%s" $.Template.BasePath $file) $ | trim }}
{{- if $rendered }}
---
{{ $rendered }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
The names of the rendered objects of one kind (argument: dict "root" $
"kind" "ValidatingAdmissionPolicy"), as a JSON list.
*/}}
{{- define "cpm.admissionPolicyNames" -}}
{{- $names := list }}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" (include "cpm.admissionPolicies" .root) -1 }}
{{- $o := fromYaml $doc }}
{{- if and $o (eq ($o.kind | default "") $.kind) }}
{{- $names = append $names $o.metadata.name }}
{{- end }}
{{- end }}
{{- $names | sortAlpha | toJson }}
{{- end -}}

{{/* Where the manager and `helm test` mount the expected-policies ConfigMap. */}}
{{- define "cpm.admissionPoliciesDir" -}}
/etc/clusterprofile-manager/admission-policies
{{- end -}}

{{/*
Rules: get on the named policies and bindings (dict "policies" list
"bindings" list); a kind with no name gets no rule (no resourceNames would
mean every object).
*/}}
{{- define "cpm.admissionPolicyReadRules" -}}
{{- if .policies }}
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["validatingadmissionpolicies"]
  resourceNames: {{ .policies | toJson }}
  verbs: ["get"]
{{- end }}
{{- if .bindings }}
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["validatingadmissionpolicybindings"]
  resourceNames: {{ .bindings | toJson }}
  verbs: ["get"]
{{- end }}
{{- end -}}
