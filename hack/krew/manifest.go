package main

// The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2),
// the fields krew reads. Krew's own module is not a dependency for five
// structs.

// PluginManifest is the manifest krew's index holds for a plugin.
type PluginManifest struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   Metadata   `json:"metadata"`
	Spec       PluginSpec `json:"spec"`
}

type Metadata struct {
	Name string `json:"name"`
}

type PluginSpec struct {
	Version          string     `json:"version"`
	Homepage         string     `json:"homepage"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description"`
	Platforms        []Platform `json:"platforms"`
}

// Platform is one archive and the os/arch it is for.
type Platform struct {
	Selector Selector `json:"selector"`
	URI      string   `json:"uri"`
	SHA256   string   `json:"sha256"`
	Bin      string   `json:"bin"`
}

type Selector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

// Manifest is the plugin's manifest for a release.
func Manifest(version, source string, platforms []Platform) PluginManifest {
	return PluginManifest{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin",
		Metadata: Metadata{Name: "clusterprofile"},
		Spec: PluginSpec{
			Version: "v" + version, Homepage: source,
			ShortDescription: "Check and list the ClusterProfiles an OCM hub publishes",
			Description: "kubectl clusterprofile doctor checks, per cluster, what a consumer in a namespace needs to reach it " +
				"through the ClusterProfiles the ClusterProfile bundle for Open Cluster Management publishes (the profile, " +
				"its access entry, the token copy, the consumer's rights) and says what to fix; kubectl clusterprofile get lists them.",
			Platforms: platforms,
		},
	}
}
