package main

import (
	"context"
	"io"

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
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := sf.finish(); err != nil {
		return err
	}
	if err := acfg.Validate(); err != nil {
		return err
	}
	log, err := sf.logger(stderr)
	if err != nil {
		return err
	}
	store, engine, err := sf.open(ctx, log)
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
	return api.New(acfg, log, store, engine).Run(ctx)
}
