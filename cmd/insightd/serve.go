package main

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/insightd/insightd/api"
)

func cmdServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("serve", "serve [flags]", stderr)
	sf, err := addStoreFlags(fs, true)
	if err != nil {
		return err
	}
	acfg, err := api.ConfigFromEnv()
	if err != nil {
		return err
	}
	fs.StringVar(&acfg.Addr, "addr", acfg.Addr, "listen address (env INSIGHTD_ADDR)")
	fs.Int64Var(&acfg.BodyLimit, "body-limit", acfg.BodyLimit, "largest request body in bytes (env INSIGHTD_BODY_LIMIT)")
	migrate := fs.Bool("migrate", true, "apply pending migrations before serving")
	pprofAddr := fs.String("pprof-addr", envOr("INSIGHTD_PPROF_ADDR", ""), "serve Go's profiler on this address, e.g. 127.0.0.1:6060 (off by default; env INSIGHTD_PPROF_ADDR)")
	if err := parse(fs, args); err != nil {
		return err
	}
	// Analyses stop in the engine when the query timeout passes, not only
	// in the client waiting for them.
	acfg.Limits.MaxExecutionTime = int(math.Ceil(sf.olap.QueryTimeout.Seconds()))
	if err := acfg.Validate(); err != nil {
		return err
	}
	log, store, engine, err := sf.start(ctx, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	defer engine.Close()
	if *migrate {
		if err := migrateAll(ctx, log, store, engine); err != nil {
			return err
		}
	}
	if *pprofAddr != "" {
		servePprof(*pprofAddr, log)
	}
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
