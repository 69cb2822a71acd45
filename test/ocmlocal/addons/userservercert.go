//go:build linux

package addons

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// RotateUserServerCertificate replaces the user server's certificate, the
// trust anchor consumers get in a profile's cluster-proxy entry, as an
// operator would: delete Secret cluster-proxy-user-serving-cert so that
// cluster-proxy's manager issues a new key pair (it reconciles on a change
// of its ManagedProxyConfiguration, which the harness annotates), then
// restart the user server as `kubectl rollout restart` does. It returns once
// the server presents the new certificate, with the new tls.crt.
func (a *Addons) RotateUserServerCertificate(ctx context.Context) ([]byte, error) {
	if a.Proxy == nil {
		return nil, fmt.Errorf("cluster-proxy is not running")
	}
	hub, err := a.hubClient()
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: hubNamespace, Name: "cluster-proxy-user-serving-cert"}
	old := &corev1.Secret{}
	if err := hub.Get(ctx, key, old); err != nil {
		return nil, err
	}
	if err := hub.Delete(ctx, old); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if err := annotate(ctx, hub, managedProxyConfiguration(0), now); err != nil {
		return nil, err
	}
	fresh := &corev1.Secret{}
	err = process.Poll(ctx, 2*time.Minute, nil, func(ctx context.Context) (bool, error) {
		if err := hub.Get(ctx, key, fresh); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return len(fresh.Data["tls.crt"]) > 0 && !bytes.Equal(fresh.Data["tls.crt"], old.Data["tls.crt"]), nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for a new user server certificate: %w", err)
	}
	if err := a.restartUserServer(ctx, hub, now, fresh.Data["tls.crt"]); err != nil {
		return nil, err
	}
	a.Progress("cluster-proxy user server certificate rotated")
	return fresh.Data["tls.crt"], nil
}

// restartUserServer annotates the user server's pod template, which the hub
// kubelet answers with a new pod, and waits until it serves certPEM.
func (a *Addons) restartUserServer(ctx context.Context, hub client.Client, now string, certPEM []byte) error {
	d := &appsv1.Deployment{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: hubNamespace, Name: userServerService}, d); err != nil {
		return err
	}
	patch := client.MergeFrom(d.DeepCopy())
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = now
	if err := hub.Patch(ctx, d, patch); err != nil {
		return fmt.Errorf("restarting the user server: %w", err)
	}
	addr := a.Proxy.URL[len("https://"):]
	err := process.Poll(ctx, 2*time.Minute, nil, func(context.Context) (bool, error) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only reads the presented certificate
		if err != nil {
			return false, err
		}
		defer conn.Close()
		served := conn.ConnectionState().PeerCertificates[0].Raw
		return bytes.Equal(certPEMToDER(certPEM), served), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the user server to serve its new certificate: %w", err)
	}
	return nil
}

func annotate(ctx context.Context, hub client.Client, obj *unstructured.Unstructured, value string) error {
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"ocmlocal.open-cluster-management.io/touched":%q}}}`, value))
	if err := hub.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("annotating %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// certPEMToDER is the DER of the first certificate in certPEM.
func certPEMToDER(certPEM []byte) []byte {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return nil
	}
	return block.Bytes
}
