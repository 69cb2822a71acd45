package main

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
)

// spdxMediaType is the SBOM's media type, and the referrer's artifactType.
const spdxMediaType = "application/spdx+json"

// The parts of SPDX 2.3 (JSON) the SBOM uses.
type (
	spdxDocument struct {
		SPDXVersion       string             `json:"spdxVersion"`
		DataLicense       string             `json:"dataLicense"`
		SPDXID            string             `json:"SPDXID"`
		Name              string             `json:"name"`
		DocumentNamespace string             `json:"documentNamespace"`
		CreationInfo      spdxCreationInfo   `json:"creationInfo"`
		Packages          []spdxPackage      `json:"packages"`
		Relationships     []spdxRelationship `json:"relationships"`
	}
	spdxCreationInfo struct {
		Created  string   `json:"created"`
		Creators []string `json:"creators"`
	}
	spdxPackage struct {
		SPDXID           string       `json:"SPDXID"`
		Name             string       `json:"name"`
		VersionInfo      string       `json:"versionInfo,omitempty"`
		DownloadLocation string       `json:"downloadLocation"`
		FilesAnalyzed    bool         `json:"filesAnalyzed"`
		PrimaryPurpose   string       `json:"primaryPackagePurpose,omitempty"`
		ExternalRefs     []spdxExtRef `json:"externalRefs,omitempty"`
	}
	spdxExtRef struct {
		Category string `json:"referenceCategory"`
		Type     string `json:"referenceType"`
		Locator  string `json:"referenceLocator"`
	}
	spdxRelationship struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	}
)

var nonID = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func spdxID(kind, name string) string {
	return "SPDXRef-" + kind + "-" + nonID.ReplaceAllString(name, "-")
}

// sbom describes one platform's image: the image, each binary in it and
// the Go modules (and standard library) each binary was built from, read
// from the binaries' own build information.
func sbom(o *options, p platform, b binaries) ([]byte, error) {
	imageID := "SPDXRef-Image"
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              fmt.Sprintf("%s-%s-%s", title, o.version, p.dirName()),
		DocumentNamespace: fmt.Sprintf("%s/spdx/%s/%s/%s", strings.TrimSuffix(o.source, "/"), o.version, p.dirName(), o.revision),
		CreationInfo:      spdxCreationInfo{Created: o.created.UTC().Format("2006-01-02T15:04:05Z"), Creators: []string{"Tool: clusterprofile-bundle-hack-image"}},
		Packages: []spdxPackage{{SPDXID: imageID, Name: title, VersionInfo: o.version, DownloadLocation: "NOASSERTION",
			PrimaryPurpose: "CONTAINER"}},
		Relationships: []spdxRelationship{{Element: "SPDXRef-DOCUMENT", Type: "DESCRIBES", Related: imageID}},
	}
	modules := map[string]spdxPackage{}
	for _, path := range b.paths() {
		if err := addBinary(&doc, modules, imageID, path, o.version); err != nil {
			return nil, err
		}
	}
	ids := make([]string, 0, len(modules))
	for id := range modules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		doc.Packages = append(doc.Packages, modules[id])
	}
	return json.MarshalIndent(doc, "", "  ")
}

// addBinary adds a binary, which the image contains and which depends on
// the modules its build information lists.
func addBinary(doc *spdxDocument, modules map[string]spdxPackage, imageID, path, version string) error {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the build information of %s: %w", path, err)
	}
	name := filepath.Base(path)
	binID := spdxID("Binary", name)
	doc.Packages = append(doc.Packages, spdxPackage{SPDXID: binID, Name: "/" + name, DownloadLocation: "NOASSERTION",
		PrimaryPurpose: "APPLICATION", VersionInfo: binaryVersion(bi, version)})
	doc.Relationships = append(doc.Relationships, spdxRelationship{Element: imageID, Type: "CONTAINS", Related: binID})
	deps := []debug.Module{{Path: "stdlib", Version: bi.GoVersion}}
	// The main module is a dependency when the binary's package is in it
	// (the bundle's commands), not when it only built a tool (cp).
	if inModule(bi.Path, bi.Main.Path) {
		deps = append(deps, debug.Module{Path: bi.Main.Path, Version: binaryVersion(bi, version)})
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		deps = append(deps, *d)
	}
	for _, d := range deps {
		id := spdxID("Module", d.Path+"@"+d.Version)
		modules[id] = spdxPackage{SPDXID: id, Name: d.Path, VersionInfo: d.Version, DownloadLocation: "NOASSERTION",
			PrimaryPurpose: "LIBRARY", ExternalRefs: []spdxExtRef{{Category: "PACKAGE-MANAGER", Type: "purl",
				Locator: "pkg:golang/" + d.Path + "@" + d.Version}}}
		doc.Relationships = append(doc.Relationships, spdxRelationship{Element: binID, Type: "DEPENDS_ON", Related: id})
	}
	return nil
}

// binaryVersion is the version of the module a binary's package is in: the
// bundle's VERSION for its own commands (built from the work tree, which Go
// calls "(devel)"), else that module's.
func binaryVersion(bi *buildinfo.BuildInfo, version string) string {
	if inModule(bi.Path, bi.Main.Path) {
		if bi.Main.Version == "" || bi.Main.Version == "(devel)" {
			return version
		}
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if inModule(bi.Path, d.Path) {
			return d.Version
		}
	}
	return ""
}

func inModule(pkg, module string) bool {
	return module != "" && (pkg == module || strings.HasPrefix(pkg, module+"/"))
}
