# syntax=docker/dockerfile:1
# errtrail's binaries (ingest, alerter, errtrail, tap, loadgen) in one small image.
# Build: docker build -t errtrail .   Run: docker run errtrail ingest --help
# docker-compose.yml builds it once and runs each binary as its own service.

ARG GO_VERSION=1.26
ARG ALPINE_VERSION=3.22

FROM golang:${GO_VERSION}-alpine AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/ingest ./cmd/alerter ./cmd/errtrail ./cmd/tap ./cmd/loadgen

# Alpine rather than distroless: busybox wget serves the compose
# healthchecks (GET /readyz), and the image stays about 20 MB.
FROM alpine:${ALPINE_VERSION}
RUN apk add --no-cache ca-certificates tzdata \
    && adduser -D -H -u 10001 errtrail \
    && mkdir -p /var/lib/errtrail && chown errtrail /var/lib/errtrail
COPY --from=build /out/ingest /out/alerter /out/errtrail /out/tap /out/loadgen /usr/local/bin/
USER errtrail
# ingest /metrics, /healthz, /readyz; alerter the same; errtrail serve the
# API, the pages and the same three.
EXPOSE 19100 19101 19102
CMD ["ingest", "run"]
