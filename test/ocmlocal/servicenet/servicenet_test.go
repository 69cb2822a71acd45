//go:build linux

package servicenet

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestTargetPort(t *testing.T) {
	named := map[string]int32{"webhook": 9443}
	cases := map[string]struct {
		port    corev1.ServicePort
		want    int
		wantErr bool
	}{
		"number":                   {port: corev1.ServicePort{Port: 443, TargetPort: intstr.FromInt32(9443)}, want: 9443},
		"name of a container port": {port: corev1.ServicePort{Port: 443, TargetPort: intstr.FromString("webhook")}, want: 9443},
		"unknown name":             {port: corev1.ServicePort{Port: 443, TargetPort: intstr.FromString("metrics")}, wantErr: true},
		"none: the Service port":   {port: corev1.ServicePort{Port: 9443}, want: 9443},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := targetPort(tc.port, named)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("targetPort = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestEndpointSliceFor(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "kueue-visibility-server"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.28", Ports: []corev1.ServicePort{
			{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(8082)}}},
	}
	want := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "kueue-visibility-server-ocmlocal", Labels: map[string]string{
			"kubernetes.io/service-name": "kueue-visibility-server", "endpointslice.kubernetes.io/managed-by": "ocmlocal"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.28"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8082)}},
	}
	got, err := endpointSliceFor(svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slice (-want +got):\n%s", diff)
	}
	svc.Spec.Ports[0].TargetPort = intstr.FromString("visibility")
	if _, err := endpointSliceFor(svc, nil); err == nil {
		t.Error("a target port the pod does not name: no error")
	}
}
