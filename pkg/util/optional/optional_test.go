package optional_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
)

func TestGet(t *testing.T) {
	broken := errors.New("broken")
	present := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "present"}}
	cases := map[string]struct {
		name      string
		failing   bool
		wantFound bool
		wantErr   error
	}{
		"present: the object":              {name: "present", wantFound: true},
		"absent: nil and no error":         {name: "absent"},
		"a failed read: nil and the error": {name: "present", failing: true, wantErr: broken},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithObjects(present.DeepCopy())
			if tc.failing {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return broken
				}})
			}
			got, err := optional.Get(context.Background(), b.Build(), types.NamespacedName{Name: tc.name}, &corev1.Namespace{})
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if found := got != nil; found != tc.wantFound {
				t.Fatalf("found = %v (%v), want %v", found, got, tc.wantFound)
			}
			if tc.wantFound && got.Name != tc.name {
				t.Errorf("got %s, want %s", got.Name, tc.name)
			}
		})
	}
}
