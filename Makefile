# ClusterProfile bundle for Open Cluster Management.
#
#   make demo   the bundle on real OCM run locally as processes (hack/demo)
#   make test   unit and integration tests against a real kube-apiserver
#               (and the local real-OCM smoke test, test/ocmlocal)
#   make bench  scale benchmark against a real kube-apiserver
#   make chart-test  the Helm chart's tests (also part of make test)

SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin
ENVTEST_DIR := $(BIN)/envtest
export KUBEBUILDER_ASSETS := $(ENVTEST_DIR)
OCM_BIN_DIR := $(BIN)/ocm
export OCM_BIN_DIR
# OCM's release for test/ocmlocal (hack/ocmlocal.sh; bin/ocm holds one release at a time, and the
# harness reads which from bin/ocm/ocm-module.json). v1.3.1: see docs/development.md, "Building the programs".
OCM_VERSION ?= v1.2.0
export OCM_VERSION

# The one version source: the binaries' --version, the image tag and the chart's version and
# appVersion (pkg/version's TestChartFollowsVERSION keeps Chart.yaml equal to it).
VERSION := $(shell cat VERSION)
# GOFLAGS here carries -buildvcs=false, so the revision and date are stamped too. BUILD_DATE
# defaults to the commit's time (UTC), so that rebuilding a commit gives the same binaries.
GIT_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
BUILD_DATE ?= $(or $(shell TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD 2>/dev/null),$(shell date -u +%Y-%m-%dT%H:%M:%SZ))
VERSION_PKG := open-cluster-management.io/clusterprofile-bundle/pkg/version
LDFLAGS := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).revision=$(GIT_REVISION) -X $(VERSION_PKG).buildDate=$(BUILD_DATE)

# The image: where `make image` writes its OCI layout, for which platforms, and its source label.
IMAGE_LAYOUT ?= $(BIN)/image
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_SOURCE ?= https://github.com/open-cluster-management-io/clusterprofile-bundle
# Where a release pushes the image and the chart (the release workflow's REGISTRY).
REGISTRY ?= ghcr.io/open-cluster-management-io

CHART_DIR := charts/clusterprofile-manager
CLUSTERPROFILE_CRD := multicluster.x-k8s.io_clusterprofiles.yaml
PLACEMENTDECISION_CRD := multicluster.x-k8s.io_placementdecisions.yaml

# The module version of staticcheck 2025.1.1 (the proxy serves module versions, not release tags).
STATICCHECK_VERSION ?= v0.6.1
STATICCHECK := $(BIN)/staticcheck-$(STATICCHECK_VERSION)
# actionlint checks .github/workflows; go run module@version needs nothing in go.mod.
ACTIONLINT_VERSION ?= v1.7.12
# Helm 4 for the chart's Helm 4 test (test/chart), built from its own module by hack/helm4.sh.
HELM4_VERSION ?= v4.3.1
# Argo CD's release whose own code checks the bundle's cluster Secrets in the end-to-end suite
# (bin/argocd-check, built by hack/argocd.sh from its own module, hack/argocd, with Go 1.27).
ARGOCD_VERSION ?= v3.6.1

.PHONY: all build cp-creds envtest ocm-binaries test unit integration chart-test manifests dashboard prometheus chart-crd lint vet fmt bench demo clean image release-dry-run chart previous helm4 argocd

all: build

## build: compile every binary into bin/ (each answers --version)
build: cp-creds
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ $$($(GO) list ./cmd/... | grep -v '/cmd/cp-creds$$')

## cp-creds: the exec plugin, static (CGO off) so it runs in distroless consumer
## images; cmd/cp-creds' TestBuildIsStatic builds it through this target
cp-creds:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/cp-creds ./cmd/cp-creds

## envtest: build kube-apiserver and etcd for the tests (cached across clones)
envtest: $(ENVTEST_DIR)/kube-apiserver $(ENVTEST_DIR)/etcd

$(ENVTEST_DIR)/kube-apiserver $(ENVTEST_DIR)/etcd: hack/envtest.sh
	ENVTEST_DIR=$(ENVTEST_DIR) hack/envtest.sh

## ocm-binaries: build kube-controller-manager, OCM's operators, hub controllers and klusterlet agent
## (OCM_VERSION, default v1.2.0), managed-serviceaccount and cluster-proxy v0.10.0, the ANP tunnel
## and Kueue's manager (KUEUE_VERSION, default v0.16.1, and KUEUE_UPGRADE_VERSION, v0.19.2, which
## the e2e suite upgrades it to) for test/ocmlocal (first build about 45
## minutes on 2 cores; cached in ~/.cache/ocm-clusterprofile/ocm across clones, Kueue under its own key)
ocm-binaries: $(OCM_BIN_DIR)/.built-$(OCM_VERSION)

$(OCM_BIN_DIR)/.built-$(OCM_VERSION): hack/ocmlocal.sh hack/_upstreammirror/main.go
	rm -f $(OCM_BIN_DIR)/.built $(OCM_BIN_DIR)/.built-*
	OCM_BIN_DIR=$(OCM_BIN_DIR) hack/ocmlocal.sh
	touch $@

## test: unit and integration tests (build: test/ocmlocal runs bin/clusterprofile-agent and -manager;
## image: the e2e suite and the demo push bin/image to their local registry; cheap with a warm build cache)
# The end-to-end suite, the longest package, starts first in a go test of its own (its output
# printed when it ends), beside the other packages, TEST_PARALLEL of them at once: most wait on
# API servers and OCM's controllers more than they compute, so three test binaries in all keep
# the 2 cores CI has busy (docs/development.md).
E2E_PACKAGE := ./test/e2e
TEST_PARALLEL ?= 2

test: envtest ocm-binaries build image previous helm4 argocd
	$(GO) test $(E2E_PACKAGE) -count=1 -timeout 30m > $(BIN)/e2e-test.log 2>&1 & e2e=$$!; \
	$(GO) test -p $(TEST_PARALLEL) $$($(GO) list ./... | grep -v '/test/e2e$$') -count=1 -timeout 30m; rc=$$?; \
	wait $$e2e || rc=1; cat $(BIN)/e2e-test.log; exit $$rc
	cd hack/image && $(GO) test ./... -count=1
	cd hack/kueueconfig && $(GO) test ./... -count=1
	ARGOCD_VERSION=$(ARGOCD_VERSION) hack/argocd.sh test

## unit: tests that need no control plane (-short skips the end-to-end ones)
unit:
	$(GO) test -short $$($(GO) list ./... | grep -v /test/) -count=1

## integration: tests against the real control plane
integration: envtest ocm-binaries
	$(GO) test ./test/... -count=1

## chart-test: the Helm chart: lint, every gate combination, values schema, and on a real
## control plane its objects, RBAC per gate, Secret admission policy, helm install/uninstall
## and the manager binary running with the chart's arguments and RBAC; Helm 4 installing,
## upgrading from the previous release and uninstalling it from an OCI registry
chart-test: envtest previous helm4
	$(GO) test ./test/chart/... -count=1

## manifests: render the chart (gates in hack/manifests/values.yaml) into manifests/ for kubectl users
manifests:
	$(GO) run ./hack/manifests

## dashboard: generate the chart's Grafana dashboard from hack/dashboard (a test fails while it is stale)
dashboard:
	$(GO) run ./hack/dashboard

## prometheus: install promtool and prometheus (Debian's package) for the alert tests; needs root
prometheus:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; }

## chart-crd: copy the ClusterProfile and PlacementDecision CRDs of the pinned cluster-inventory-api
## into the chart (a chart test fails while a copy differs)
chart-crd:
	dir="$$($(GO) list -m -f '{{.Dir}}' sigs.k8s.io/cluster-inventory-api)/config/crd/bases" && \
	for crd in $(CLUSTERPROFILE_CRD) $(PLACEMENTDECISION_CRD); do \
		install -m 0644 "$$dir/$$crd" $(CHART_DIR)/files/$$crd || exit 1; \
	done

## lint: gofmt, go vet, staticcheck and actionlint
lint: vet $(STATICCHECK)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(STATICCHECK) ./...
	cd hack/image && $(STATICCHECK) ./...
	cd hack/kueueconfig && $(STATICCHECK) ./...
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

# hack/image and hack/kueueconfig are modules of their own (see their go.mod), which ./... leaves out.
vet:
	$(GO) vet ./...
	cd hack/image && $(GO) vet ./...
	cd hack/kueueconfig && $(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

$(STATICCHECK):
	GOBIN=$(BIN)/staticcheck-tmp $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(BIN)/staticcheck-tmp/staticcheck $@ && rm -rf $(BIN)/staticcheck-tmp

## bench: scale benchmark (flags via BENCH_ARGS, e.g. BENCH_ARGS="-clusters 200 -namespaces 5")
bench: envtest build
	$(GO) run ./test/bench -manager $(BIN)/clusterprofile-manager $(BENCH_ARGS)

## demo: start real OCM locally (hub, 2 klusterlets, addons, a registry with bin/image), install the
## bundle with its chart from that image, show profiles, agent health, a synced token, a request through
## cp-creds and cluster-proxy, a consumer pod copying cp-creds from the image as the docs say, Argo CD's
## own code listing the clusters and syncing an Application to one (bin/argocd-check), a live
## change (DEMO_ARGS="-keep" keeps it up; needs root for the pod sandboxes)
# Built and run as a binary, not with `go run`: go run exits 1 on Ctrl-C
# whatever the program returns, and Ctrl-C is a normal way to end -keep.
demo: envtest ocm-binaries build image argocd
	$(GO) build -o $(BIN)/clusterprofile-demo ./hack/demo
	$(BIN)/clusterprofile-demo -bin $(BIN) $(DEMO_ARGS)

## image: build the multi-arch image with no Docker engine and no base image (hack/image): an OCI
## layout in bin/image (tag $(VERSION)) with an SPDX SBOM per platform as a referrer;
## PUSH=<registry>/<name>:<tag> also pushes both (credentials: ~/.docker/config.json, e.g. crane auth login)
image:
	cd hack/image && $(GO) run . -src $(CURDIR) -out $(IMAGE_LAYOUT) -work $(BIN)/image-build \
		-version $(VERSION) -revision $(GIT_REVISION) -created $(BUILD_DATE) -ldflags '$(LDFLAGS)' \
		-source $(IMAGE_SOURCE) -platforms $(IMAGE_PLATFORMS) $(IMAGE_ARGS) $(if $(PUSH),-push $(PUSH))

## previous: the previous release's chart and image (this platform) for the upgrade tests, from
## the revision hack/release/previous names, into bin/previous (cached per revision, hack/previous.sh)
previous:
	hack/previous.sh

## helm4: the Helm 4 CLI (HELM4_VERSION) as bin/helm4, built from its module outside this one,
## whose k8s.io modules are older than Helm 4's (cached per version, hack/helm4.sh)
helm4:
	HELM4_VERSION=$(HELM4_VERSION) HELM4_BIN=$(BIN)/helm4 hack/helm4.sh

## argocd: argocd-check, Argo CD $(ARGOCD_VERSION)'s own code (util/db, gitops-engine's cache and sync,
## ApplicationSet's generators) as a CLI for the end-to-end suite, built with Go 1.27 (which the go
## command fetches) from its own module, hack/argocd; cached per version and source hash
argocd:
	ARGOCD_VERSION=$(ARGOCD_VERSION) ARGOCD_BIN=$(BIN)/argocd-check hack/argocd.sh

## chart: package the chart (version and appVersion checked against VERSION, image.repository
## against $(REGISTRY)/clusterprofile-bundle) into CHART_OUT (bin/)
CHART_OUT ?= $(BIN)
chart:
	$(GO) run ./hack/chart -out $(CHART_OUT) -version $(VERSION) -image-repository $(REGISTRY)/clusterprofile-bundle

## release-dry-run: every artefact the release workflow publishes, into bin/release/, pushing
## nothing: the image layout (release/image) and its SBOMs, the chart archive, cp-creds and
## kubectl-clusterprofile for each of RELEASE_PLATFORMS, the latter also as krew archives with
## their krew manifest (clusterprofile.yaml, hack/krew), and SHA256SUMS over the files
RELEASE_DIR ?= $(BIN)/release
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
RELEASE_BINARIES := cp-creds kubectl-clusterprofile
release-dry-run:
	rm -rf $(RELEASE_DIR) && mkdir -p $(RELEASE_DIR)
	$(MAKE) image IMAGE_LAYOUT=$(RELEASE_DIR)/image IMAGE_ARGS='-sbom-dir $(RELEASE_DIR)'
	$(MAKE) chart CHART_OUT=$(RELEASE_DIR)
	set -e; for p in $(RELEASE_PLATFORMS); do for c in $(RELEASE_BINARIES); do \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' \
			-o $(RELEASE_DIR)/$$c-$${p%/*}-$${p#*/} ./cmd/$$c; done; done
	$(GO) run ./hack/krew -dir $(RELEASE_DIR) -version $(VERSION) -source $(IMAGE_SOURCE)
	cd $(RELEASE_DIR) && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS

clean:
	rm -rf $(BIN)
