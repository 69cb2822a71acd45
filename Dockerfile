# Multi-stage build of the ClusterProfile bundle's binaries.
#   make image   (needs a Docker engine; IMG=<registry>/<name>:<tag> to name it)
#
# Binaries are static (CGO off) and the runtime image is distroless and runs
# as a non-root user. Later binaries (the agent, cp-creds at /cp-creds) join
# the same image, so a consumer's initContainer can `cp /cp-creds /plugins/`.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/...

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/clusterprofile-manager /clusterprofile-manager
USER 65532:65532
ENTRYPOINT ["/clusterprofile-manager"]
