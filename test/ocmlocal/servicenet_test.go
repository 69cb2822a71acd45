//go:build linux

package ocmlocal

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
