package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/api/ingest"
	"github.com/insightd/insightd/api/metrics"
)

func cmdServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("serve", "serve [flags]", stderr)
	sf, err := addStoreFlags(fs, useBoth)
	if err != nil {
		return err
	}
	acfg := api.DefaultConfig()
	fs.StringVar(&acfg.Addr, "addr", acfg.Addr, "listen address")
	fs.Int64Var(&acfg.BodyLimit, "body-limit", acfg.BodyLimit, "largest request body in bytes, also after gzip decompression")
	bytesVar(fs, &acfg.Limits.MaxMemoryUsage, "max-query-memory", acfg.Limits.MaxMemoryUsage, "memory one analysis may use in the engine (e.g. 4GiB); group-by and sort state past half of it spills to disk")
	fs.Int64Var(&acfg.Limits.MaxResultRows, "max-result-rows", acfg.Limits.MaxResultRows, "rows one analysis statement may return")
	fs.Int64Var(&acfg.Limits.MaxRowsToRead, "max-rows-read", acfg.Limits.MaxRowsToRead, "rows one statement (an analysis's or a user's HogQL) may read from its tables (0: no limit)")
	fs.Int64Var(&acfg.Limits.MaxRowsInJoin, "max-join-rows", acfg.Limits.MaxRowsInJoin, "keys one statement's join may hold in its table (0: no limit)")
	bytesVar(fs, &acfg.Limits.MaxBytesInJoin, "max-join-memory", acfg.Limits.MaxBytesInJoin, "memory one statement's join table may take (e.g. 2GiB; 0: no limit)")
	fs.IntVar(&acfg.Ingest.MaxEvents, "ingest-max-events", acfg.Ingest.MaxEvents, "capture: the most events one group-commit insert gathers")
	durationVar(fs, &acfg.Ingest.Linger, "ingest-linger", acfg.Ingest.Linger, "capture: how long the first waiting request waits for others to share its insert")
	fs.IntVar(&acfg.Ingest.Inserts, "ingest-inserts", acfg.Ingest.Inserts, "capture: group-commit inserts running at once")
	durationVar(fs, &acfg.HeaderTimeout, "header-timeout", acfg.HeaderTimeout, "longest a request's header may take to arrive (0: no limit)")
	durationVar(fs, &acfg.BodyReadTimeout, "body-read-timeout", acfg.BodyReadTimeout, "a body may take this long plus its size at --body-min-rate, else 408 (0: no limit)")
	bytesVar(fs, &acfg.BodyMinRate, "body-min-rate", acfg.BodyMinRate, "bytes a second a body must arrive at, past --body-read-timeout (e.g. 1KiB)")
	durationVar(fs, &acfg.IdleTimeout, "idle-timeout", acfg.IdleTimeout, "how long a keep-alive connection may sit idle before it is closed (0: no limit)")
	fs.IntVar(&acfg.MaxConnections, "max-connections", acfg.MaxConnections, "connections held at once; when full, the longest idle one is closed for a new one (0: no limit)")
	var memoryLimit int64
	bytesVar(fs, &memoryLimit, "memory-limit", 0, "soft limit of the Go heap (e.g. 2GiB; 0: a quarter of the machine's memory; GOMEMLIMIT wins)")
	migrate := fs.Bool("migrate", true, "apply pending migrations before serving")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's profiler on this address, e.g. 127.0.0.1:6060 (off by default)")
	geoipDB := fs.String("geoip-db", "", "a MaxMind-format city or country database (GeoLite2, DB-IP Lite) to add $geoip_* properties at capture (off by default)")
	fs.BoolVar(&acfg.GeoIPPersons, "geoip-persons", false, "with --geoip-db, also set the person's $geoip_* and $initial_geoip_* properties, as PostHog does (every located event then updates its person)")
	fs.StringVar(&acfg.MetricsAddr, "metrics-addr", "", "serve the Prometheus metrics on this address alone, e.g. 127.0.0.1:9100, instead of at /metrics of --addr")
	if err := parse(fs, args); err != nil {
		return err
	}
	// Analyses stop in the engine when the query timeout passes, not only
	// in the client waiting for them.
	acfg.Limits.MaxExecutionTime = int(math.Ceil(sf.olap.QueryTimeout.Seconds()))
	if err := errors.Join(acfg.Validate(), acfg.Ingest.Validate()); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *geoipDB != "" {
		if acfg.GeoIP, err = ingest.OpenGeoIP(*geoipDB); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		defer acfg.GeoIP.Close()
	}
	memoryLimit = setMemoryLimit(memoryLimit)
	log, store, engine, err := sf.start(ctx, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	defer engine.Close()
	log.Info("memory limit", "go_heap_bytes", memoryLimit)
	if *migrate {
		if err := migrateAll(ctx, log, store, engine); err != nil {
			return err
		}
	}
	if *pprofAddr != "" {
		servePprof(*pprofAddr, log)
	}
	acfg.Metrics = metrics.New()
	return api.New(acfg, log, store, engine).Run(ctx)
}

// servePprof exposes net/http/pprof on its own listener, never on the API
// address: profiles reveal internals and must stay on a private address.
func servePprof(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	go func() {
		srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		log.Info("profiler listening", "addr", addr)
		if err := srv.ListenAndServe(); err != nil {
			log.Error("profiler stopped", "err", err)
		}
	}()
}
