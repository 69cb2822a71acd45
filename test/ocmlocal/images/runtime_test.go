//go:build linux

package images

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
)

func TestCommandLine(t *testing.T) {
	image := v1.Config{Entrypoint: []string{"/manager"}, Cmd: []string{"--default"}}
	env := map[string]string{"NS": "ns1"}
	cases := map[string]struct {
		container corev1.Container
		config    v1.Config
		want      []string
		wantErr   bool
	}{
		"the image's entrypoint and cmd": {config: image, want: []string{"/manager", "--default"}},
		"args replace the image's cmd": {
			container: corev1.Container{Args: []string{"--namespace=$(NS)"}}, config: image,
			want: []string{"/manager", "--namespace=ns1"},
		},
		"a command replaces both": {
			container: corev1.Container{Command: []string{"cp", "/cp-creds"}, Args: []string{"/plugins/cp-creds"}}, config: image,
			want: []string{"cp", "/cp-creds", "/plugins/cp-creds"},
		},
		"nothing to run": {wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := CommandLine(tc.container, tc.config, env)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestContainerUser(t *testing.T) {
	rootfs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(rootfs, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"passwd": "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
		"group":  "root:x:0:\nnonroot:x:65532:\n",
	} {
		if err := os.WriteFile(filepath.Join(rootfs, "etc", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	image := func(user string) *Image {
		return &Image{Rootfs: rootfs, Config: v1.Config{User: user}}
	}
	nonRoot := &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	cases := map[string]struct {
		pod       *corev1.PodSecurityContext
		container *corev1.SecurityContext
		image     *Image
		want      podsandbox.Root
		wantErr   bool
	}{
		"the image's numeric user and group":  {pod: nonRoot, image: image("65532:65532"), want: podsandbox.Root{UID: 65532, GID: 65532}},
		"the image's user, its primary group": {image: image("65532"), want: podsandbox.Root{UID: 65532, GID: 65532}},
		"the image's user by name":            {image: image("nonroot:nonroot"), want: podsandbox.Root{UID: 65532, GID: 65532}},
		"runAsUser of the pod wins, the group then from passwd": {
			pod: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}, image: image("65532:65532"), want: podsandbox.Root{},
		},
		"the container's over the pod's, supplemental groups and fsGroup": {
			pod:       &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000), SupplementalGroups: []int64{5}, FSGroup: ptr.To[int64](7)},
			container: &corev1.SecurityContext{RunAsUser: ptr.To[int64](2000)},
			image:     image("65532"), want: podsandbox.Root{UID: 2000, GID: 1000, Groups: []uint32{5, 7}},
		},
		"runAsNonRoot refuses an image running as root": {pod: nonRoot, image: image(""), wantErr: true},
		"runAsNonRoot refuses a user name it cannot check": {
			container: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}, image: image("nonroot"), wantErr: true,
		},
		"an image user missing from its passwd": {image: image("nobody"), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := User(corev1.PodSpec{SecurityContext: tc.pod}, corev1.Container{SecurityContext: tc.container}, tc.image)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}
		})
	}
}

func TestExpandVars(t *testing.T) {
	env := map[string]string{"NS": "addons", "NAME": "agent"}
	if got, want := ExpandVars("--namespace=$(NS) --name=$(NAME) $(UNSET)", env), "--namespace=addons --name=agent $(UNSET)"; got != want {
		t.Errorf("ExpandVars = %q, want %q", got, want)
	}
}
