# The two commands: `make run` and `make test`. Both install what is missing.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: run test setup build bench bench-projects bench-ingest bench-load bench-trends bench-funnels bench-retention bench-soak bench-paths bench-correlation bench-entities bench-dashboards bench-query bench-breakdowns bench-actors bench-slow-clients bench-geoip bench-import bench-taxonomy lint clean

run: setup build
	@scripts/run.sh

test: setup
	@scripts/test.sh

setup:
	@scripts/setup.sh

build:
	@go build -ldflags "$(LDFLAGS)" -o bin/insightd ./cmd/insightd

bench: setup
	@scripts/bench.sh

bench-projects: setup
	@scripts/bench-projects.sh

bench-ingest: setup
	@scripts/bench-ingest.sh $(ARGS)

bench-load: setup
	@scripts/bench-load.sh

bench-import: setup
	@scripts/bench-import.sh

bench-trends: setup
	@scripts/bench-trends.sh

bench-funnels: setup
	@scripts/bench-funnels.sh

bench-retention: setup
	@scripts/bench-retention.sh

bench-dashboards: setup
	@scripts/bench-dashboards.sh

bench-query: setup
	@scripts/bench-query.sh

bench-breakdowns: setup
	@scripts/bench-breakdowns.sh

bench-soak: setup
	@scripts/bench-soak.sh

bench-paths: setup
	@scripts/bench-paths.sh

bench-correlation: setup
	@scripts/bench-correlation.sh

bench-entities: setup
	@scripts/bench-entities.sh

bench-persons: setup
	@scripts/bench-persons.sh

bench-actors: setup
	@scripts/bench-actors.sh

bench-taxonomy: setup
	@scripts/bench-taxonomy.sh

bench-geoip: setup
	@scripts/bench-geoip.sh $(ARGS)

bench-slow-clients: setup
	@scripts/bench-slow-clients.sh $(ARGS)

lint:
	gofmt -l . | (! grep .)
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

clean:
	rm -rf bin
