//go:build linux

package kubelet

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
)

func TestPodMounts(t *testing.T) {
	dirs := map[string]string{"hub": "/w/hub", "ca": "/w/ca", "cert": "/w/cert", "other": "/w/other"}
	cases := map[string]struct {
		containers   []corev1.Container
		wantMounts   []podsandbox.Mount
		wantRewrites map[string]string
		wantErr      bool
	}{
		"/etc and /var/run are bound, other paths rewritten": {
			containers: []corev1.Container{{Name: "a", VolumeMounts: []corev1.VolumeMount{
				{Name: "hub", MountPath: "/etc/hub/"}, {Name: "ca", MountPath: "/var/run/ca"}, {Name: "cert", MountPath: "/server-cert"},
			}}},
			wantMounts: []podsandbox.Mount{
				{Source: "/w/hub", Target: "/etc/hub"}, {Source: "/w/ca", Target: "/var/run/ca"}, {Source: "/w/cert", Target: "/server-cert"},
			},
			wantRewrites: map[string]string{"/server-cert": "/w/cert"},
		},
		"a top-level directory the host uses is only rewritten": {
			containers:   []corev1.Container{{Name: "a", VolumeMounts: []corev1.VolumeMount{{Name: "cert", MountPath: "/usr/share/cert"}}}},
			wantRewrites: map[string]string{"/usr/share/cert": "/w/cert"},
		},
		"/tmp/ sub-paths are bound, /tmp itself is the host's": {
			containers: []corev1.Container{{Name: "a", VolumeMounts: []corev1.VolumeMount{
				{Name: "cert", MountPath: "/tmp/k8s-webhook-server/serving-certs"}, {Name: "other", MountPath: "/tmp"},
			}}},
			wantMounts:   []podsandbox.Mount{{Source: "/w/cert", Target: "/tmp/k8s-webhook-server/serving-certs"}},
			wantRewrites: map[string]string{},
		},
		"a sub-path (one key, a file) is only rewritten": {
			containers: []corev1.Container{{Name: "a", VolumeMounts: []corev1.VolumeMount{
				{Name: "other", MountPath: "/controller_manager_config.yaml", SubPath: "controller_manager_config.yaml"},
			}}},
			wantRewrites: map[string]string{"/controller_manager_config.yaml": "/w/other/controller_manager_config.yaml"},
		},
		"containers sharing a volume at one path share the mount": {
			containers: []corev1.Container{
				{Name: "a", VolumeMounts: []corev1.VolumeMount{{Name: "hub", MountPath: "/etc/tls"}}},
				{Name: "b", VolumeMounts: []corev1.VolumeMount{{Name: "hub", MountPath: "/etc/tls"}}},
			},
			wantMounts:   []podsandbox.Mount{{Source: "/w/hub", Target: "/etc/tls"}},
			wantRewrites: map[string]string{},
		},
		"two volumes at one path cannot share a sandbox": {
			containers: []corev1.Container{
				{Name: "a", VolumeMounts: []corev1.VolumeMount{{Name: "hub", MountPath: "/etc/tls"}}},
				{Name: "b", VolumeMounts: []corev1.VolumeMount{{Name: "other", MountPath: "/etc/tls"}}},
			},
			wantErr: true,
		},
		"unknown volume": {
			containers: []corev1.Container{{Name: "a", VolumeMounts: []corev1.VolumeMount{{Name: "missing", MountPath: "/etc/x"}}}},
			wantErr:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mounts, rewrites, err := podMounts(corev1.PodSpec{Containers: tc.containers}, dirs)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.wantMounts, mounts); diff != "" {
				t.Errorf("mounts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRewrites, rewrites); diff != "" {
				t.Errorf("rewrites (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRewritePaths(t *testing.T) {
	rewrites := map[string]string{"/server-cert": "/w/cert", "/ca": "/w/ca"}
	cases := map[string]struct{ in, want string }{
		"flag value with a file":  {in: "--cert=/server-cert/tls.crt", want: "--cert=/w/cert/tls.crt"},
		"flag value is the mount": {in: "--dir=/ca", want: "--dir=/w/ca"},
		"bare path":               {in: "/ca", want: "/w/ca"},
		"prefix of a longer name": {in: "--x=/cacerts/a", want: "--x=/cacerts/a"},
		"unrelated argument":      {in: "--v=2", want: "--v=2"},
		"env value with a file":   {in: "/ca/ca.crt", want: "/w/ca/ca.crt"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := rewritePaths(tc.in, rewrites); got != tc.want {
				t.Errorf("rewritePaths(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestBinaryFor(t *testing.T) {
	m := NewImageMap(
		ImageBinary{Command: "/agent", ImageContains: "cluster-proxy", Path: "/bin/proxy-addon-agent"},
		ImageBinary{Command: "/msa", Path: "/bin/msa"},
	)
	cases := map[string]struct {
		container corev1.Container
		want      string
		wantOK    bool
	}{
		"command and image":                   {container: corev1.Container{Image: "quay.io/x/cluster-proxy:v1", Command: []string{"/agent"}}, want: "/bin/proxy-addon-agent", wantOK: true},
		"same command, other image":           {container: corev1.Container{Image: "quay.io/x/other:v1", Command: []string{"/agent"}}},
		"entry point in args without command": {container: corev1.Container{Image: "any", Args: []string{"/msa", "agent"}}, want: "/bin/msa", wantOK: true},
		"no entry point":                      {container: corev1.Container{Image: "any"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := m.Binary(tc.container)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Binary = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestResourceValue(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "manager",
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
		},
	}}}}}}
	c := d.Spec.Template.Spec.Containers[0]
	got := map[string]string{}
	for _, r := range []string{"limits.memory", "requests.cpu", "limits.cpu"} {
		got[r] = resourceValue(d, corev1.Container{}, &corev1.ResourceFieldSelector{ContainerName: c.Name, Resource: r})
	}
	want := map[string]string{"limits.memory": "536870912", "requests.cpu": "1", "limits.cpu": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resource values (-want +got):\n%s", diff)
	}
}

// TestPodRunsOnlyItsOwnDeployment: a pod keeps running only for the
// Deployment it was started for, at that template. One deleted and created
// again between two syncs (as OCM's work agent does when an addon is
// disabled and enabled at once) has a new UID and gets a new pod, whose
// ServiceAccount token and Secrets are the new ones.
func TestPodRunsOnlyItsOwnDeployment(t *testing.T) {
	deployment := func(uid types.UID, image string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{UID: uid},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "agent", Image: image}}}}}}
	}
	started := deployment("first", "agent:v1")
	p := &Pod{hash: templateHash(started), deployment: started.UID}
	got := map[string]bool{}
	for name, d := range map[string]*appsv1.Deployment{
		"the same Deployment":                         deployment("first", "agent:v1"),
		"the same Deployment, another template":       deployment("first", "agent:v2"),
		"one created again with the same template":    deployment("second", "agent:v1"),
		"one created again with another template too": deployment("second", "agent:v2"),
	} {
		got[name] = p.Runs(d)
	}
	want := map[string]bool{
		"the same Deployment":                         true,
		"the same Deployment, another template":       false,
		"one created again with the same template":    false,
		"one created again with another template too": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the pod runs (-want +got):\n%s", diff)
	}
}
