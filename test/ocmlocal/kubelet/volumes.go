//go:build linux

package kubelet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/pki"
)

// volumeFiles is a Secret or ConfigMap written into a directory.
type volumeFiles struct {
	dir, namespace, secret, configMap string
	optional                          bool
}

// refreshVolumes writes a running pod's Secret and ConfigMap volumes again
// (startPod wrote them first). It logs a wait once, and its end, so that a
// Secret deleted and never written again shows in the log as a wait that
// does not end, and the same wait coming back is logged again.
func (k *Kubelet) refreshVolumes(ctx context.Context, key string, p *Pod) {
	key += "/volumes"
	if err := k.writeVolumes(ctx, p.volumes); err != nil {
		k.waitOnce(ctx, key, err.Error())
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.waits[key]; ok {
		delete(k.waits, key)
		k.progressf("kubelet %s: %s written again", k.cp.Name, key)
	}
}

// prepareVolumes makes a directory per volume of the pod and writes the
// files of its Secret and ConfigMap volumes; it returns the directories by
// volume name.
func (k *Kubelet) prepareVolumes(ctx context.Context, p *Pod, volumes []corev1.Volume) (map[string]string, error) {
	dirs := map[string]string{}
	for _, v := range volumes {
		dir := filepath.Join(p.dir, "volumes", v.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		dirs[v.Name] = dir
		switch {
		case v.EmptyDir != nil:
			// Writable by any user, as a kubelet makes it.
			if err := os.Chmod(dir, 0o777); err != nil {
				return nil, err
			}
		case v.Secret != nil:
			p.volumes = append(p.volumes, volumeFiles{dir: dir, namespace: p.namespace, secret: v.Secret.SecretName, optional: ptr.Deref(v.Secret.Optional, false)})
		case v.ConfigMap != nil:
			p.volumes = append(p.volumes, volumeFiles{dir: dir, namespace: p.namespace, configMap: v.ConfigMap.Name, optional: ptr.Deref(v.ConfigMap.Optional, false)})
		}
		// emptyDir and others: an empty directory.
	}
	return dirs, k.writeVolumes(ctx, p.volumes)
}

// writeServiceAccount writes what a projected service account volume holds:
// a token of the pod's service account from a real TokenRequest, the
// cluster's CA and the namespace.
func (k *Kubelet) writeServiceAccount(ctx context.Context, d *appsv1.Deployment, podDir string) (string, error) {
	sa := serviceAccountOf(d)
	tr, err := k.client.CoreV1().ServiceAccounts(d.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of service account %s/%s: %w", d.Namespace, sa, err)
	}
	dir := filepath.Join(podDir, "serviceaccount")
	files := map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": k.cp.CAData, "namespace": []byte(d.Namespace)}
	if err := pki.WriteFiles(dir, files); err != nil {
		return "", err
	}
	// The projected volume's default mode (0644): a container's user of
	// any uid reads it.
	for name := range files {
		if err := os.Chmod(filepath.Join(dir, name), 0o644); err != nil {
			return "", err
		}
	}
	return dir, os.Chmod(dir, 0o755)
}

// writeVolumes writes each Secret or ConfigMap into its directory, replacing
// files whose content changed (rename, so readers never see half a file).
func (k *Kubelet) writeVolumes(ctx context.Context, volumes []volumeFiles) error {
	for _, v := range volumes {
		data, err := k.volumeData(ctx, v)
		if err != nil {
			return err
		}
		for name, content := range data {
			path := filepath.Join(v.dir, name)
			if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
				continue
			}
			if err := os.WriteFile(path+".tmp", content, 0o644); err != nil {
				return err
			}
			if err := os.Rename(path+".tmp", path); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *Kubelet) volumeData(ctx context.Context, v volumeFiles) (map[string][]byte, error) {
	if v.secret != "" {
		s, err := k.client.CoreV1().Secrets(v.namespace).Get(ctx, v.secret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && v.optional {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading Secret %s/%s: %w", v.namespace, v.secret, err)
		}
		return s.Data, nil
	}
	cm, err := k.client.CoreV1().ConfigMaps(v.namespace).Get(ctx, v.configMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && v.optional {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", v.namespace, v.configMap, err)
	}
	data := map[string][]byte{}
	for name, value := range cm.Data {
		data[name] = []byte(value)
	}
	return data, nil
}
