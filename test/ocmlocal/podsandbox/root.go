//go:build linux

package podsandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	securejoin "github.com/cyphar/filepath-securejoin"
	"golang.org/x/sys/unix"
)

// Root runs a container from an image, as a container runtime would: the
// process is chrooted into its own copy-on-write view of the unpacked image
// (an overlay whose upper layer is a tmpfs), with /proc, a minimal /dev,
// the pod's /etc/hosts and the pod's volumes bound inside, and runs as the
// user the pod or the image names. Nothing of the host's file system is
// visible to it, so a wrong path, a missing program, a dynamically linked
// binary or a file only root may read fails as in a cluster.
type Root struct {
	// Rootfs is the unpacked image: the overlay's read-only lower layer.
	Rootfs string `json:"rootfs"`
	// Mounts bind the pod's volumes (and files) at paths inside the root.
	Mounts []Mount `json:"mounts,omitempty"`
	// ReadOnly makes the root itself read-only (readOnlyRootFilesystem).
	ReadOnly bool `json:"readOnly,omitempty"`
	// UID, GID and Groups are the process's user, group and supplementary
	// groups.
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
	// WorkingDir is the process's working directory inside the root
	// (default "/").
	WorkingDir string `json:"workingDir,omitempty"`
}

// devices are bound from the host into each root's /dev, as runc's default
// devices.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// rootDir is where a container's root is mounted in the sandbox.
func rootDir(scratch, container string) string {
	return filepath.Join(scratch, "containers", container, "root")
}

// setUpRoot mounts the container's root (once per container; restarts keep
// its writable layer, as a restarted container does) and returns its path.
func setUpRoot(scratch string, c Container) (string, error) {
	r := c.Root
	dir := filepath.Join(scratch, "containers", c.Name)
	layer, root := filepath.Join(dir, "layer"), rootDir(scratch, c.Name)
	for _, d := range []string{layer, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	if err := unix.Mount("tmpfs", layer, "tmpfs", 0, "mode=0755"); err != nil {
		return "", fmt.Errorf("tmpfs for the writable layer: %w", err)
	}
	upper, work := filepath.Join(layer, "upper"), filepath.Join(layer, "work")
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
	}
	// The root directory is the image's: the upper layer's must not hide
	// its mode and owner.
	if err := copyOwnerAndMode(r.Rootfs, upper); err != nil {
		return "", err
	}
	if err := unix.Mount("overlay", root, "overlay", 0, "lowerdir="+r.Rootfs+",upperdir="+upper+",workdir="+work); err != nil {
		return "", fmt.Errorf("overlay on %s: %w", r.Rootfs, err)
	}
	proc, err := mkdirIn(root, "/proc")
	if err != nil {
		return "", err
	}
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return "", fmt.Errorf("proc: %w", err)
	}
	if err := setUpDev(root); err != nil {
		return "", err
	}
	mounts := append([]Mount{{Source: filepath.Join(scratch, hostsFile), Target: "/etc/hosts", ReadOnly: true}}, r.Mounts...)
	for _, m := range mounts {
		if err := bindIn(root, m); err != nil {
			return "", err
		}
	}
	if r.ReadOnly {
		if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return "", fmt.Errorf("making the root read-only: %w", err)
		}
	}
	return root, nil
}

func copyOwnerAndMode(from, to string) error {
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	if err := os.Chown(to, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	return os.Chmod(to, fi.Mode().Perm())
}

// setUpDev mounts a tmpfs on /dev with the host's basic devices bound in.
func setUpDev(root string) error {
	dev, err := mkdirIn(root, "/dev")
	if err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID, "mode=0755"); err != nil {
		return fmt.Errorf("tmpfs on /dev: %w", err)
	}
	for _, name := range devices {
		if _, err := os.Stat("/dev/" + name); err != nil {
			continue
		}
		target := filepath.Join(dev, name)
		if err := os.WriteFile(target, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+name, target, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("binding /dev/%s: %w", name, err)
		}
	}
	return nil
}

// mkdirIn creates a directory at a path inside root, resolving symbolic
// links of the image within the root, and returns its path outside.
func mkdirIn(root, target string) (string, error) {
	p, err := securejoin.SecureJoin(root, target)
	if err != nil {
		return "", err
	}
	return p, os.MkdirAll(p, 0o755)
}

// bindIn binds m.Source at m.Target inside root: a directory on a
// directory, a file on a file.
func bindIn(root string, m Mount) error {
	fi, err := os.Stat(m.Source)
	if err != nil {
		return err
	}
	target, err := securejoin.SecureJoin(root, m.Target)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		err = os.MkdirAll(target, 0o755)
	} else if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
		var f *os.File
		if f, err = os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("mount point %s: %w", m.Target, err)
	}
	if err := unix.Mount(m.Source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s at %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		if err := unix.Mount("", target, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", m.Target, err)
		}
	}
	return nil
}

// commandInRoot builds the command that runs c chrooted into root: argv[0]
// is looked up on the container's PATH inside the root when it has no
// slash, as the runtime does.
func commandInRoot(root string, c Container) (*exec.Cmd, error) {
	r := c.Root
	program := c.Argv[0]
	if !strings.Contains(program, "/") {
		found, err := lookPathIn(root, program, envValue(c.Env, "PATH"))
		if err != nil {
			return nil, err
		}
		program = found
	}
	dir := r.WorkingDir
	if dir == "" {
		dir = "/"
	}
	cmd := &exec.Cmd{Path: program, Args: c.Argv, Env: c.Env, Dir: dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     root,
		Credential: &syscall.Credential{Uid: r.UID, Gid: r.GID, Groups: r.Groups},
		Pdeathsig:  syscall.SIGKILL,
	}
	return cmd, nil
}

// lookPathIn finds an executable file named name in the directories of
// PATH inside root.
func lookPathIn(root, name, pathList string) (string, error) {
	for _, dir := range filepath.SplitList(pathList) {
		if !path.IsAbs(dir) {
			continue
		}
		candidate := path.Join(dir, name)
		p, err := securejoin.SecureJoin(root, candidate)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("executable %q not found in $PATH (%s) of the image", name, pathList)
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
