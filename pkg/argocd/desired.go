package argocd

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// Settings are what every cluster Secret of the capability shares.
type Settings struct {
	// ManagerName is the cluster manager whose profiles count as ours.
	ManagerName string
	// Namespace is Argo CD's namespace, where the profiles and the cluster
	// Secrets are.
	Namespace string
	// ManagedServiceAccount names the ManagedServiceAccount whose token
	// cp-creds hands Argo CD on every cluster.
	ManagedServiceAccount string
	// AccessProvider names the entry the clusters are reached through.
	AccessProvider string
	// Project, when set, scopes every cluster to that Argo CD project.
	Project string
	// CpCredsPath is where Argo CD's pods run cp-creds from.
	CpCredsPath string
}

// WithDefaults fills in what is unset with the defaults.
func (s Settings) WithDefaults() Settings {
	for _, field := range []struct {
		value    *string
		fallback string
	}{{&s.Namespace, DefaultNamespace}, {&s.ManagedServiceAccount, DefaultManagedServiceAccount},
		{&s.AccessProvider, DefaultAccessProvider}, {&s.CpCredsPath, DefaultCpCredsPath}} {
		if *field.value == "" {
			*field.value = field.fallback
		}
	}
	return s
}

// SecretName is the name of the cluster Secret of the profile named profile.
func SecretName(profile string) string { return SecretPrefix + profile }

// clusterConfig is the part of Argo CD's cluster config (the Secret's
// config key) the capability writes: cp-creds as the exec plugin, handed
// the cluster through KUBERNETES_EXEC_INFO, and the published CA. Never a
// credential: cp-creds reads the token where the syncer copied it. The exec
// config comes first: the chart's -secret-writes policy checks that the
// config starts with it (CEL sees a Secret's data base64-encoded, so a
// fixed prefix is what it can check).
type clusterConfig struct {
	ExecProviderConfig execProviderConfig `json:"execProviderConfig"`
	TLSClientConfig    tlsClientConfig    `json:"tlsClientConfig"`
}

type tlsClientConfig struct {
	Insecure bool   `json:"insecure"`
	CAData   []byte `json:"caData,omitempty"`
}

type execProviderConfig struct {
	Command            string          `json:"command"`
	Args               []string        `json:"args"`
	APIVersion         string          `json:"apiVersion"`
	ProvideClusterInfo bool            `json:"provideClusterInfo"`
	Config             json.RawMessage `json:"config,omitempty"`
}

// DesiredSecret is the Argo CD cluster Secret of profile, a profile in Argo
// CD's namespace, or nil when the hub does not publish the profile there
// (served) or the access provider publishes no entry for it (entry nil).
// Its server and CA are the entry's, as the hub publishes it (not as the
// profile's status says: whoever may write profiles there may write that);
// its labels are the profile's and the cluster's standard properties, for
// ApplicationSet's cluster generator to select by.
func DesiredSecret(profile *cpv1alpha1.ClusterProfile, served bool, entry *cpv1alpha1.AccessProvider, s Settings) (*corev1.Secret, error) {
	if profile == nil || !served || entry == nil {
		return nil, nil
	}
	config, err := json.Marshal(clusterConfig{
		TLSClientConfig: tlsClientConfig{CAData: entry.Cluster.CertificateAuthorityData},
		ExecProviderConfig: execProviderConfig{Command: s.CpCredsPath, Args: []string{"--managed-serviceaccount=" + s.ManagedServiceAccount},
			APIVersion: ExecAPIVersion, ProvideClusterInfo: true, Config: execExtension(entry)},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding the cluster config of %s: %w", profile.Name, err)
	}
	data := map[string][]byte{KeyName: []byte(profile.Name), KeyServer: []byte(entry.Cluster.Server), KeyConfig: config}
	if s.Project != "" {
		data[KeyProject] = []byte(s.Project)
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: profile.Namespace, Name: SecretName(profile.Name), Labels: secretLabels(profile, s),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: cpv1alpha1.GroupVersion.String(), Kind: "ClusterProfile",
				Name: profile.Name, UID: profile.UID, BlockOwnerDeletion: ptr.To(false)}}},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}, nil
}

// execExtension is the entry's client.authentication.k8s.io/exec extension
// ({"clusterName": ...}), which cp-creds finds the cluster by.
func execExtension(entry *cpv1alpha1.AccessProvider) json.RawMessage {
	for _, e := range entry.Cluster.Extensions {
		if e.Name == cpcreds.ExecExtensionName {
			return e.Extension.Raw
		}
	}
	return nil
}

// secretLabels are the profile's labels and its standard properties (as
// labels where their values are valid ones), and the labels that make the
// Secret Argo CD's cluster and ours.
func secretLabels(profile *cpv1alpha1.ClusterProfile, s Settings) map[string]string {
	labels := maps.Clone(profile.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, p := range profile.Status.Properties {
		if (p.Name == clusterprofile.PropertyClusterID || p.Name == clusterprofile.PropertyClusterSet) && len(validation.IsValidLabelValue(p.Value)) == 0 {
			labels[p.Name] = p.Value
		}
	}
	labels[LabelSecretType] = SecretTypeCluster
	labels[LabelCreatedBy] = s.ManagerName
	return labels
}
