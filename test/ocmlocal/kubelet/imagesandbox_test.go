//go:build linux

package kubelet

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/images"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/registry"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/sandbox"
)

// TestBundleImageRunsAsInACluster runs the bundle's image (bin/image,
// through the local registry) in a pod sandbox as the kubelet runs it, as
// the nonroot user, and checks what a cluster would show: the documented
// initContainer (`cp /cp-creds /plugins/cp-creds` into an emptyDir) works
// and its copy runs, while a wrong path, a program the image lacks, a
// dynamically linked binary and a file only root may read fail.
func TestBundleImageRunsAsInACluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("pod sandboxes need root (mount and network namespaces)")
	}
	if err := registry.BundleImageBuilt(registry.BundleImageLayout()); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v (make image)", err)
	}
	dir := t.TempDir()
	procs := &process.Group{LogDir: filepath.Join(dir, "logs")}
	podRunner, err := binaries.BuildPodRunner(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Start(registry.Options{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	k := &Kubelet{cfg: Config{WorkDir: dir, LogDir: procs.LogDir, Registry: reg, Store: images.NewStore(filepath.Join(dir, "images")),
		Sandboxes: &sandbox.Runner{WorkDir: dir, Program: podRunner, Procs: procs}}}

	vols := podVolumes{dirs: map[string]string{}}
	for name, mode := range map[string]os.FileMode{"plugins": 0o777, "secret": 0o755, "host": 0o755} {
		vols.dirs[name] = filepath.Join(dir, "volumes", name)
		if err := os.MkdirAll(vols.dirs[name], mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(vols.dirs[name], mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(vols.dirs["secret"], "key"), []byte("only root"), 0o600); err != nil {
		t.Fatal(err)
	}
	dynamic, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vols.dirs["host"], "true"), dynamic, 0o755); err != nil {
		t.Fatal(err)
	}
	mounts := []corev1.VolumeMount{{Name: "plugins", MountPath: "/plugins"}, {Name: "secret", MountPath: "/secret", ReadOnly: true}, {Name: "host", MountPath: "/host"}}
	spec := corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}}
	container := func(name string, command ...string) podsandbox.Container {
		c := corev1.Container{Name: name, Image: reg.BundleReference(), Command: command, VolumeMounts: mounts,
			SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}}
		sc, _, err := k.imageContainer(spec, c, map[string]string{}, vols)
		if err != nil {
			t.Fatalf("container %s: %v", name, err)
		}
		sc.Log = filepath.Join(procs.LogDir, name+".log")
		return sc
	}
	s, err := k.cfg.Sandboxes.Start(sandbox.Spec{Name: "image",
		InitContainers: []podsandbox.Container{container("install", "cp", "/cp-creds", "/plugins/cp-creds")},
		Containers: []podsandbox.Container{
			container("copy-runs", "/plugins/cp-creds", "--version"),
			container("wrong-path", "/plugins/cp-credz"),
			container("no-shell", "sh", "-c", "true"),
			container("dynamic", "/host/true"),
			container("root-only", "cp", "/secret/key", "/plugins/key"),
			container("root-fs-read-only", "cp", "/cp-creds", "/cp-creds-copy"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(10 * time.Second) })

	want := map[string]string{
		"copy-runs":         "exit status 0",
		"wrong-path":        "no such file or directory",
		"no-shell":          `executable "sh" not found in $PATH`,
		"dynamic":           "no such file or directory", // its interpreter, /lib64/ld-linux-*.so.2
		"root-only":         "exit status 1",
		"root-fs-read-only": "exit status 1",
	}
	deadline := time.Now().Add(time.Minute)
	for name, wantExit := range want {
		var st podsandbox.Status
		for time.Now().Before(deadline) {
			raw, err := os.ReadFile(podsandbox.StatusPath(filepath.Join(dir, "pods", "image"), name))
			if err == nil && json.Unmarshal(raw, &st) == nil && st.LastExit != "" {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !strings.Contains(st.LastExit, wantExit) {
			t.Errorf("container %s ended with %q, want %q (log %s)", name, st.LastExit, wantExit, filepath.Join(procs.LogDir, name+".log"))
		}
	}
	fi, err := os.Stat(filepath.Join(vols.dirs["plugins"], "cp-creds"))
	if err != nil {
		t.Fatalf("the initContainer's copy: %v", err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != 65532 || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("the copy is owned by %d with mode %s, want the nonroot user's (65532) and executable", uid, fi.Mode())
	}
	if out, _ := os.ReadFile(filepath.Join(procs.LogDir, "copy-runs.log")); !strings.Contains(string(out), "cp-creds") {
		t.Errorf("the copy's --version printed %q", out)
	}
}
