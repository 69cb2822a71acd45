package fieldmanager

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWrittenBy(t *testing.T) {
	obj := &metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: Prefix + "mirror", Subresource: "status"},
		{Manager: Prefix + "mirror"},
		{Manager: "kubectl", Subresource: "status"},
	}}
	cases := map[string]struct {
		manager      string
		subresources []string
		want         bool
	}{
		"any subresource":                       {manager: Prefix + "mirror", want: true},
		"the status":                            {manager: Prefix + "mirror", subresources: []string{"status"}, want: true},
		"the main resource":                     {manager: Prefix + "mirror", subresources: []string{""}, want: true},
		"another manager's status":              {manager: "kubectl", subresources: []string{""}},
		"a manager with no entry":               {manager: Prefix + "credsync"},
		"a subresource the manager never wrote": {manager: Prefix + "mirror", subresources: []string{"scale"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := WrittenBy(obj, tc.manager, tc.subresources...); got != tc.want {
				t.Errorf("WrittenBy(%s, %q) = %v, want %v", tc.manager, tc.subresources, got, tc.want)
			}
		})
	}
}
