# insightd for machines with a Docker engine (see docker-compose.yml).
# The image talks to a ClickHouse server (CLICKHOUSE_URL): chDB is loaded
# with purego only when CLICKHOUSE_URL is empty, so the binary needs no cgo
# and the image carries no libchdb.so.

FROM golang:1.26 AS build
# The image pins GOTOOLCHAIN=local; if its 1.26 is older than go.mod's
# go line, fetch that toolchain instead of failing.
ENV GOTOOLCHAIN=auto
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
# Only the Go packages (the layout is fixed): the build context also holds
# .deps/ and .data/, hundreds of megabytes the build must not upload.
COPY api ./api
COPY benchmarks ./benchmarks
COPY cmd ./cmd
COPY metadata ./metadata
COPY migrations ./migrations
COPY olap ./olap
COPY querybuilder ./querybuilder
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/insightd ./cmd/insightd

# Not scratch: purego links the binary dynamically against glibc (libc,
# libdl, libpthread), even without cgo.
FROM debian:bookworm-slim
# ca-certificates for TLS to ClickHouse Cloud or a managed PostgreSQL. No
# tzdata: clickhouse-go embeds Go's time zone database (time/tzdata).
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/insightd insightd
COPY --from=build /out/insightd /usr/local/bin/insightd
USER insightd
WORKDIR /var/lib/insightd
ENV INSIGHTD_ADDR=0.0.0.0:8000 \
    INSIGHTD_DATA_DIR=/var/lib/insightd
EXPOSE 8000
ENTRYPOINT ["insightd"]
CMD ["serve"]
