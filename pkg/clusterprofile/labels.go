package clusterprofile

import "k8s.io/apimachinery/pkg/util/validation"

// IsLabelValue tells whether value can be a label's value. A cluster or
// set name may have 253 characters, a label value 63: the mirror leaves a
// label off a profile rather than carry a name it cannot, and readers that
// check a profile's labels (the doctor) expect exactly that.
func IsLabelValue(value string) bool { return len(validation.IsValidLabelValue(value)) == 0 }

// ClusterNameLabel is the cluster-name label value a profile named after
// cluster carries; ok is false when the mirror leaves the label off.
func ClusterNameLabel(cluster string) (value string, ok bool) {
	if !IsLabelValue(cluster) {
		return "", false
	}
	return cluster, true
}
