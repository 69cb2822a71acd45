# Multi-stage build of the ClusterProfile bundle's image.
#   make image   (needs a Docker engine; IMG=<registry>/<name>:<tag> to name it)
#
# One image for the hub, the managed clusters and consumers: every command
# under cmd/ at the root, so
#   /clusterprofile-manager   the hub manager (the entrypoint; the Helm chart runs it)
#   /clusterprofile-agent     the agent the addon deploys on managed clusters
#   /cp-creds                 the exec credential plugin consumers mount
#   /clusterprofile-check     the chart's `helm test`
#   /kubectl-clusterprofile   the kubectl plugin (doctor, get) for consumers
# and /bin/cp, a static cp, so that a consumer's initContainer can run
# `cp /cp-creds /plugins/cp-creds` (the runtime image has no shell or coreutils).
# Every binary is static (CGO off); the runtime image is distroless and runs
# as a non-root user.
FROM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ENV CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH

# u-root's cp, pinned, built in a throwaway module of its own.
WORKDIR /cp
RUN go mod init cp && go get github.com/u-root/u-root@v0.15.0 && \
    go build -trimpath -ldflags="-s -w" -o /out/tools/cp github.com/u-root/u-root/cmds/core/cp

WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
RUN go build -trimpath -ldflags="-s -w" -o /out/bin/ ./cmd/...

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/bin/ /
COPY --from=build /out/tools/cp /bin/cp
USER 65532:65532
ENTRYPOINT ["/clusterprofile-manager"]
