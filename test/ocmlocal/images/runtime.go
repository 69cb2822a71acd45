//go:build linux

package images

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
)

// defaultPath is the PATH a container runtime sets when the image sets none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// CommandLine is what Kubernetes runs: the container's command (with its
// args) if it has one, else the image's entrypoint with the container's
// args or, if it has none, the image's cmd; $(VAR) expanded in the
// container's own command and args.
func CommandLine(c corev1.Container, config v1.Config, env map[string]string) ([]string, error) {
	var argv []string
	switch {
	case len(c.Command) > 0:
		argv = slices.Concat(c.Command, c.Args)
	case len(c.Args) > 0:
		argv = slices.Concat(config.Entrypoint, c.Args)
	default:
		argv = slices.Concat(config.Entrypoint, config.Cmd)
	}
	if len(argv) == 0 {
		return nil, errors.New("neither the container nor its image has a command")
	}
	for i := range argv {
		argv[i] = ExpandVars(argv[i], env)
	}
	return argv, nil
}

// Env is the process's environment: the image's, then the
// container's (which wins), PATH and HOME defaulted as a runtime does.
func Env(img *Image, uid uint32, containerEnv map[string]string) []string {
	env := map[string]string{}
	for _, kv := range img.Config.Env {
		name, value, _ := strings.Cut(kv, "=")
		env[name] = value
	}
	for name, value := range containerEnv {
		env[name] = value
	}
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = defaultPath
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = "/"
		if u, ok := lookupUser(img.Rootfs, strconv.FormatUint(uint64(uid), 10)); ok && u.home != "" {
			env["HOME"] = u.home
		}
	}
	list := make([]string, 0, len(env))
	for name, value := range env {
		list = append(list, name+"="+value)
	}
	slices.Sort(list)
	return list
}

// User is the process's user, group and supplementary groups as
// a kubelet and runtime choose them: runAsUser and runAsGroup of the
// container, else of the pod, else the image's User (a number or a name of
// its /etc/passwd, with an optional group), the group defaulting to the
// user's primary group in the image; the pod's supplementalGroups and
// fsGroup as supplementary groups. runAsNonRoot refuses uid 0 and an image
// user that is not numeric, as the kubelet does.
func User(spec corev1.PodSpec, c corev1.Container, img *Image) (podsandbox.Root, error) {
	pod := spec.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	runAsUser := firstSet(sc.RunAsUser, pod.RunAsUser)
	runAsGroup := firstSet(sc.RunAsGroup, pod.RunAsGroup)
	nonRoot := ptr.Deref(firstSet(sc.RunAsNonRoot, pod.RunAsNonRoot), false)
	var r podsandbox.Root
	imageUser, imageGroup, _ := strings.Cut(img.Config.User, ":")
	if runAsUser != nil {
		r.UID = uint32(*runAsUser)
	} else {
		uid, err := imageUID(img, imageUser, nonRoot)
		if err != nil {
			return r, err
		}
		r.UID = uid
	}
	if nonRoot && r.UID == 0 {
		return r, errors.New("container has runAsNonRoot and image will run as root")
	}
	switch {
	case runAsGroup != nil:
		r.GID = uint32(*runAsGroup)
	case imageGroup != "" && runAsUser == nil:
		gid, err := imageGID(img, imageGroup)
		if err != nil {
			return r, err
		}
		r.GID = gid
	default:
		if u, ok := lookupUser(img.Rootfs, strconv.FormatUint(uint64(r.UID), 10)); ok {
			r.GID = u.gid
		}
	}
	for _, g := range pod.SupplementalGroups {
		r.Groups = append(r.Groups, uint32(g))
	}
	if pod.FSGroup != nil {
		r.Groups = append(r.Groups, uint32(*pod.FSGroup))
	}
	return r, nil
}

// imageUID is the uid of the image's user (root when it names none): a
// number, or a name of its /etc/passwd, which runAsNonRoot cannot verify.
func imageUID(img *Image, imageUser string, nonRoot bool) (uint32, error) {
	if imageUser == "" {
		return 0, nil
	}
	uid, err := strconv.ParseUint(imageUser, 10, 32)
	if err == nil {
		return uint32(uid), nil
	}
	if nonRoot {
		return 0, fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root", imageUser)
	}
	u, ok := lookupUser(img.Rootfs, imageUser)
	if !ok {
		return 0, fmt.Errorf("the image's user %s is not in its /etc/passwd", imageUser)
	}
	return u.uid, nil
}

// imageGID is the gid of the image's group: a number or a name of its
// /etc/group.
func imageGID(img *Image, imageGroup string) (uint32, error) {
	if gid, err := strconv.ParseUint(imageGroup, 10, 32); err == nil {
		return uint32(gid), nil
	}
	g, ok := lookupGroup(img.Rootfs, imageGroup)
	if !ok {
		return 0, fmt.Errorf("the image's group %s is not in its /etc/group", imageGroup)
	}
	return g, nil
}

func firstSet[T any](values ...*T) *T {
	for _, v := range values {
		if v != nil {
			return v
		}
	}
	return nil
}

type passwdEntry struct {
	uid, gid uint32
	home     string
}

// lookupUser finds a user of the image's /etc/passwd by name or uid.
func lookupUser(rootfs, nameOrUID string) (passwdEntry, bool) {
	for _, f := range readColonFile(rootfs, "/etc/passwd", 7) {
		if f[0] != nameOrUID && f[2] != nameOrUID {
			continue
		}
		uid, err1 := strconv.ParseUint(f[2], 10, 32)
		gid, err2 := strconv.ParseUint(f[3], 10, 32)
		if err1 == nil && err2 == nil {
			return passwdEntry{uid: uint32(uid), gid: uint32(gid), home: f[5]}, true
		}
	}
	return passwdEntry{}, false
}

// lookupGroup finds a group of the image's /etc/group by name.
func lookupGroup(rootfs, name string) (uint32, bool) {
	for _, f := range readColonFile(rootfs, "/etc/group", 3) {
		if f[0] == name {
			if gid, err := strconv.ParseUint(f[2], 10, 32); err == nil {
				return uint32(gid), true
			}
		}
	}
	return 0, false
}

// readColonFile reads the lines of a passwd-style file of the image with
// at least fields fields (links resolved inside the image).
func readColonFile(rootfs, name string, fields int) [][]string {
	path, err := securejoin.SecureJoin(rootfs, name)
	if err != nil {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out [][]string
	s := bufio.NewScanner(f)
	for s.Scan() {
		parts := strings.Split(s.Text(), ":")
		if len(parts) >= fields {
			out = append(out, parts)
		}
	}
	return out
}

// ExpandVars replaces $(NAME) with the variable's value, as Kubernetes does
// in a container's command, args and env values.
func ExpandVars(s string, env map[string]string) string {
	for name, value := range env {
		s = strings.ReplaceAll(s, "$("+name+")", value)
	}
	return s
}
