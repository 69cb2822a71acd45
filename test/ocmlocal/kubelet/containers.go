//go:build linux

package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/images"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/sandbox"
)

// namedPorts are the pod's container ports that have a name (a Service's
// targetPort may name one).
func namedPorts(spec corev1.PodSpec) map[string]int32 {
	ports := map[string]int32{}
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name != "" {
				ports[p.Name] = p.ContainerPort
			}
		}
	}
	return ports
}

// podMounts binds each volume at its mount path in the sandbox: under /etc,
// /var/run and /tmp (see podsandbox.bind), and under a top-level directory
// that the host does not use (missing or empty, e.g. the klusterlet agent's
// /spoke: the sandbox puts a private tmpfs there). The container's
// arguments and environment are also rewritten from a mount path outside
// /etc, /var/run and /tmp to the volume's directory (rewrites: mount path →
// directory), so that a path under a top-level directory the host does use
// (which cannot be bound) still works where the arguments name it; a
// sub-path mount (one file) is only rewritten. A volume
// at /tmp itself (OCM's scratch emptyDir) is neither: the pod keeps the
// host's /tmp, where the work directory lives, and programs make their own
// unique temporary names there.
func podMounts(spec corev1.PodSpec, volumeDirs map[string]string) ([]podsandbox.Mount, map[string]string, error) {
	var mounts []podsandbox.Mount
	rewrites := map[string]string{}
	bound := map[string]string{}
	for _, c := range spec.Containers {
		for _, vm := range c.VolumeMounts {
			dir, ok := volumeDirs[vm.Name]
			if !ok {
				return nil, nil, fmt.Errorf("container %s mounts unknown volume %s", c.Name, vm.Name)
			}
			if vm.SubPath != "" {
				dir = filepath.Join(dir, vm.SubPath)
			}
			target := filepath.Clean(vm.MountPath)
			if prev, seen := bound[target]; seen {
				if prev != dir {
					return nil, nil, fmt.Errorf("two volumes at %s; containers of one pod share the sandbox's mounts", target)
				}
				continue
			}
			bound[target] = dir
			switch {
			case vm.SubPath != "":
				// One key of a Secret or ConfigMap: a file, which the sandbox
				// cannot bind over a directory; the arguments name it (e.g.
				// Kueue's --config=/controller_manager_config.yaml).
				rewrites[target] = dir
			case target == "/tmp":
			case strings.HasPrefix(target, "/etc/") || strings.HasPrefix(target, "/var/run/") || strings.HasPrefix(target, "/run/") || strings.HasPrefix(target, "/tmp/"):
				mounts = append(mounts, podsandbox.Mount{Source: dir, Target: target})
			default:
				rewrites[target] = dir
				if podsandbox.UnusedTop(target) {
					mounts = append(mounts, podsandbox.Mount{Source: dir, Target: target})
				}
			}
		}
	}
	return mounts, rewrites, nil
}

// podVolumes are the pod's volume directories (by volume name), the
// rewrites of mount paths in the arguments of local binaries (podMounts),
// and the service account directory ("" without a token).
type podVolumes struct {
	dirs           map[string]string
	rewrites       map[string]string
	serviceAccount string
}

// serviceAccountDir is where a pod's service account token is mounted.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// containers builds each container's command line and environment, and
// records in p how each runs: from its image in the local registry
// (pulled and unpacked, see imagecontainer.go), or as a local binary.
func (k *Kubelet) containers(ctx context.Context, d *appsv1.Deployment, cs []corev1.Container, vols podVolumes, p *Pod, init bool) ([]podsandbox.Container, error) {
	var out []podsandbox.Container
	for _, c := range cs {
		env, err := k.containerEnv(ctx, d, c)
		if err != nil {
			return nil, err
		}
		info := containerInfo{name: c.Name, init: init, image: c.Image,
			log: filepath.Join(k.cfg.LogDir, k.cp.Name+"-"+d.Namespace+"-"+d.Name+"-"+c.Name+".log")}
		var sc podsandbox.Container
		if k.fromRegistry(c) {
			sc, info.from, err = k.imageContainer(d.Spec.Template.Spec, c, env, vols)
		} else {
			sc, info.program, err = k.hostContainer(c, env, vols.rewrites)
		}
		if err != nil {
			return nil, fmt.Errorf("container %s: %w", c.Name, err)
		}
		sc.Log = info.log
		out = append(out, sc)
		p.containers = append(p.containers, info)
	}
	return out, nil
}

// hostContainer builds a container played by the local binary its image
// maps to, in the sandbox's view of the host's file system, with mount
// paths rewritten (podMounts) in its arguments and environment.
func (k *Kubelet) hostContainer(c corev1.Container, env, rewrites map[string]string) (podsandbox.Container, string, error) {
	bin, _ := k.cfg.Images.Binary(c)
	if _, err := os.Stat(bin); err != nil {
		return podsandbox.Container{}, "", fmt.Errorf("binary %s is not built: %w", bin, err)
	}
	argv := append(slices.Clone(c.Command), c.Args...)
	argv[0] = bin
	for i := range argv[1:] {
		argv[i+1] = rewritePaths(images.ExpandVars(argv[i+1], env), rewrites)
	}
	var envList []string
	for name, value := range env {
		envList = append(envList, name+"="+rewritePaths(value, rewrites))
	}
	slices.Sort(envList)
	return podsandbox.Container{Name: c.Name, Argv: argv, Env: sandbox.PodEnv(envList...)}, bin, nil
}

// containerEnv resolves the container's environment as a kubelet would,
// with the in-cluster API server at 127.0.0.1:443 (relayed by the sandbox
// to this cluster's API server; its certificate is valid for 127.0.0.1).
func (k *Kubelet) containerEnv(ctx context.Context, d *appsv1.Deployment, c corev1.Container) (map[string]string, error) {
	env := map[string]string{"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	for _, v := range c.Env {
		switch {
		case v.ValueFrom == nil:
			env[v.Name] = images.ExpandVars(v.Value, env)
		case v.ValueFrom.FieldRef != nil:
			env[v.Name] = fieldValue(d, v.ValueFrom.FieldRef.FieldPath)
		case v.ValueFrom.ResourceFieldRef != nil:
			env[v.Name] = resourceValue(d, c, v.ValueFrom.ResourceFieldRef)
		case v.ValueFrom.SecretKeyRef != nil:
			s, err := k.client.CoreV1().Secrets(d.Namespace).Get(ctx, v.ValueFrom.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", v.Name, err)
			}
			env[v.Name] = string(s.Data[v.ValueFrom.SecretKeyRef.Key])
		case v.ValueFrom.ConfigMapKeyRef != nil:
			cm, err := k.client.CoreV1().ConfigMaps(d.Namespace).Get(ctx, v.ValueFrom.ConfigMapKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", v.Name, err)
			}
			env[v.Name] = cm.Data[v.ValueFrom.ConfigMapKeyRef.Key]
		}
	}
	return env, nil
}

func fieldValue(d *appsv1.Deployment, path string) string {
	switch path {
	case "metadata.namespace":
		return d.Namespace
	case "metadata.name":
		return d.Name + "-ocmlocal"
	case "spec.serviceAccountName":
		return serviceAccountOf(d)
	case "status.podIP", "status.hostIP":
		return "127.0.0.1"
	case "spec.nodeName":
		return "ocmlocal"
	}
	return ""
}

// resourceValue is a container's request or limit as the downward API gives
// it (divisor 1: bytes, whole cores rounded up); "" when not set.
func resourceValue(d *appsv1.Deployment, c corev1.Container, ref *corev1.ResourceFieldSelector) string {
	if ref.ContainerName != "" {
		for _, other := range d.Spec.Template.Spec.Containers {
			if other.Name == ref.ContainerName {
				c = other
			}
		}
	}
	list := c.Resources.Limits
	name, isRequest := strings.CutPrefix(ref.Resource, "requests.")
	if isRequest {
		list = c.Resources.Requests
	} else {
		name = strings.TrimPrefix(ref.Resource, "limits.")
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		return ""
	}
	return strconv.FormatInt(q.Value(), 10)
}

// rewritePaths replaces a mount path with the volume's directory where the
// path starts a value: the whole string, or after "=" (flags) or ","/":"
// (lists), followed by "/", "," or the end.
func rewritePaths(s string, rewrites map[string]string) string {
	for from, to := range rewrites {
		re := regexp.MustCompile(`(^|[=,:])` + regexp.QuoteMeta(from) + `(/|,|$)`)
		s = re.ReplaceAllString(s, "${1}"+strings.ReplaceAll(to, "$", "$$")+"${2}")
	}
	return s
}

func serviceAccountOf(d *appsv1.Deployment) string {
	spec := d.Spec.Template.Spec
	if spec.ServiceAccountName != "" {
		return spec.ServiceAccountName
	}
	if spec.DeprecatedServiceAccount != "" {
		return spec.DeprecatedServiceAccount
	}
	return "default"
}
