package main

import (
	"context"
	"io"
)

func cmdMigrate(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("migrate", "migrate [flags]", stderr)
	sf, err := addStoreFlags(fs, useBoth)
	if err != nil {
		return err
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	log, store, engine, err := sf.start(ctx, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	defer engine.Close()
	return migrateAll(ctx, log, store, engine)
}
