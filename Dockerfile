# syntax=docker/dockerfile:1
#
# The gateway image: a static Go binary on distroless, running as the
# distroless "nonroot" user (65532), with the bundled demo catalog at
# /etc/gateway/catalog.yaml. Deployments mount their own catalog over
# /etc/gateway (see deploy/kubernetes).
#
#   docker build -t mcp-gateway .
#   docker run --rm -p 8080:8080 -e GATEWAY_JWT_SECRET=... -e DEMO_SERVICE_TOKEN=... \
#     -e MONITOR_URL=http://monitor.example:9090 mcp-gateway
#
# Pin the base images by digest (image@sha256:...) in your registry mirror
# for reproducible builds; the tags below are the intent.

# go.mod says go 1.26.x; the image floats to the newest 1.26 patch. The
# official images set GOTOOLCHAIN=local, so a too-old toolchain fails the
# build instead of downloading another one.
ARG GO_VERSION=1.26

# The builder runs on the build host's platform and cross-compiles to the
# target (CGO is off), so multi-arch builds need no emulation.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0

# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download

COPY . .
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/gateway ./cmd/gateway

# static-debian12 has CA certificates, tzdata and /etc/passwd entries for
# nonroot, and nothing else: no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /gateway
COPY --from=build /src/catalog.yaml /etc/gateway/catalog.yaml

# 8080: MCP, the REST mirror, /healthz and /readyz. 9464: /metrics and
# /status when serve runs with --metrics-listen 0.0.0.0:9464.
EXPOSE 8080 9464

# nonroot:nonroot written as numbers: a kubelet enforcing runAsNonRoot
# cannot resolve a user name inside the image and refuses to start a
# container whose USER is not numeric (unless the pod sets runAsUser).
USER 65532:65532

# No HEALTHCHECK: distroless has no shell or curl to run one, and Docker's
# HEALTHCHECK only runs commands inside the container. Orchestrators probe
# GET /healthz (alive) and GET /readyz (catalog loaded) over HTTP instead.

ENTRYPOINT ["/gateway"]
CMD ["serve", "--catalog", "/etc/gateway/catalog.yaml", "--listen", "0.0.0.0:8080"]
