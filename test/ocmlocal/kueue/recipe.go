//go:build linux

package kueue

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
)

// The docs' MultiKueue recipe (docs/consumers.md, "MultiKueue").
const (
	// RecipeConfigFile is the recipe's Kueue configuration for the Kueue
	// releases up to 0.18, which the harness starts with, and
	// RecipeConfigV019File the one for 0.19 and later, which Upgrade
	// moves to.
	RecipeConfigFile     = "kueue-manager-config.yaml"
	RecipeConfigV019File = "kueue-manager-config-v0.19.yaml"
	// RecipePatchFile is the recipe's patch of Kueue's Deployment.
	RecipePatchFile = "kueue-controller-manager-cp-creds.yaml"
	// kueueConfigMap is the chart's ConfigMap for release kueue, which the
	// recipe's configuration file replaces.
	kueueConfigMap = kueueRelease + "-manager-config"
	// releaseImageRepository is the repository the docs name for the
	// bundle's image, which the recipe says to change for a mirror.
	releaseImageRepository = "ghcr.io/open-cluster-management-io/clusterprofile-bundle"
)

// RecipeFile is the path of a file of the docs' MultiKueue recipe.
func RecipeFile(name string) string {
	return filepath.Join(binaries.RepoRoot(), "docs", "examples", "multikueue", name)
}

// recipeKueueConfig is the controller_manager_config.yaml of a recipe's
// ConfigMap file.
func recipeKueueConfig(file string) (string, error) {
	raw, err := os.ReadFile(RecipeFile(file))
	if err != nil {
		return "", err
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(raw, cm); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	config := cm.Data["controller_manager_config.yaml"]
	if cm.Name != kueueConfigMap || cm.Namespace != Namespace || config == "" {
		return "", fmt.Errorf("%s: want the ConfigMap %s/%s with controller_manager_config.yaml", file, Namespace, kueueConfigMap)
	}
	return config, nil
}

// MirroredRecipePatch is the recipe's patch of Kueue's Deployment with
// the bundle's image named from bundleRepository (the local registry's),
// as the recipe tells a user with a mirror to change it.
func MirroredRecipePatch(bundleRepository string) ([]byte, error) {
	raw, err := os.ReadFile(RecipeFile(RecipePatchFile))
	if err != nil {
		return nil, err
	}
	release := []byte("image: " + releaseImageRepository + ":")
	if !bytes.Contains(raw, release) {
		return nil, fmt.Errorf("%s names no image %q", RecipePatchFile, release)
	}
	return bytes.ReplaceAll(raw, release, []byte("image: "+bundleRepository+":")), nil
}

// patchWithRecipe patches Kueue's Deployment on the hub as the recipe
// says (kubectl patch's strategic merge), with MirroredRecipePatch.
func (k *Kueue) patchWithRecipe(ctx context.Context) error {
	mirrored, err := MirroredRecipePatch(k.BundleRepository)
	if err != nil {
		return err
	}
	patch, err := yaml.YAMLToJSON(mirrored)
	if err != nil {
		return fmt.Errorf("%s: %w", RecipePatchFile, err)
	}
	hub, err := k.Hub.Clientset()
	if err != nil {
		return err
	}
	if _, err := hub.AppsV1().Deployments(Namespace).Patch(ctx, Deployment, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patching Kueue's Deployment with %s: %w", RecipePatchFile, err)
	}
	return nil
}
