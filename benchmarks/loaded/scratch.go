package loaded

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
)

// OpenScratch opens and migrates the stores of a benchmark that writes
// (ingestload, geoipload): the embedded engine in $INSIGHTD_DATA_DIR/olap
// (a scratch directory its script makes) and the PostgreSQL at
// $DATABASE_URL. close closes both.
func OpenScratch(ctx context.Context, log *slog.Logger) (engine olap.Engine, store *metadata.Store, close func(), err error) {
	dir := os.Getenv("INSIGHTD_DATA_DIR")
	if dir == "" {
		return nil, nil, nil, errors.New("INSIGHTD_DATA_DIR must name a scratch directory")
	}
	ocfg := olap.DefaultConfig()
	if v := os.Getenv("INSIGHTD_CHDB_LIB"); v != "" {
		ocfg.ChDBLib = v
	}
	ocfg.DataDir = filepath.Join(dir, "olap")
	if engine, err = olap.Open(ctx, ocfg, log); err != nil {
		return nil, nil, nil, err
	}
	if _, err = olap.Migrate(ctx, engine); err == nil {
		store, err = metadata.Open(ctx, metadata.Config{DatabaseURL: os.Getenv("DATABASE_URL"), MaxOpenConns: 20, AuthCacheTTL: time.Minute})
	}
	if err != nil {
		engine.Close()
		return nil, nil, nil, err
	}
	if _, err = store.Migrate(ctx); err != nil {
		store.Close()
		engine.Close()
		return nil, nil, nil, err
	}
	return engine, store, func() { store.Close(); engine.Close() }, nil
}
