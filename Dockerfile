# Aviary: one image, one binary; the subcommand picks the role
# (api | worker | migrate | dev | admin ...). See docker-compose.yml.

# ---- build ------------------------------------------------------------------
FROM golang:1.26-bookworm AS build
# The official image pins GOTOOLCHAIN=local; allow Go to fetch the exact
# patch release go.mod asks for if the image is older.
ENV GOTOOLCHAIN=auto
WORKDIR /src

COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

ARG AVIARY_VERSION=dev
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${AVIARY_VERSION}" -o /out/aviary ./cmd/aviary

# ---- runtime ----------------------------------------------------------------
FROM debian:bookworm-slim

# ca-certificates: TLS to S3 and other upstreams; ffmpeg: media processing.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates ffmpeg \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 aviary \
    && useradd --system --uid 10001 --gid aviary --home-dir /var/lib/aviary \
       --create-home --shell /usr/sbin/nologin aviary

COPY --from=build /out/aviary /usr/local/bin/aviary

USER 10001:10001
WORKDIR /var/lib/aviary
# Local blob driver (used when no S3 endpoint is configured) writes here.
ENV AVIARY_BLOB_DIR=/var/lib/aviary/blobs

EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/aviary"]
CMD ["api"]
