// Command insightd is the analytics query server and its tools: serve,
// migrate, admin (bootstrap, create-key), demo-data, load and version.
// Configuration comes from environment variables; flags override them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `insightd: product-analytics query server (PostHog's legacy insights API)

Usage:
  insightd serve      [flags]   serve the HTTP API
  insightd migrate    [flags]   apply PostgreSQL and ClickHouse migrations (idempotent)
  insightd admin bootstrap --email E --org NAME [--project NAME]
                                create an organization, owner, project and all-scope key
  insightd admin create-key --email E --scopes a:b,c:d [--label L]
                                create a personal API key for an existing user
  insightd load --project ID --events N --persons P --days D [--seed S] [--end YYYY-MM-DD]
                                write a synthetic data set straight into ClickHouse
  insightd demo-data --project ID [--persons N] [--days D] [--seed S]
                                write a simulated product's events into a project
  insightd version              print the version

Run "insightd <command> --help" for a command's flags.
Environment: DATABASE_URL, CLICKHOUSE_URL, INSIGHTD_ADDR, INSIGHTD_DATA_DIR,
INSIGHTD_CHDB_LIB, INSIGHTD_QUERY_TIMEOUT, INSIGHTD_LOG_LEVEL.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stderr)
	case "migrate":
		err = cmdMigrate(ctx, args[1:], stdout, stderr)
	case "admin":
		err = cmdAdmin(ctx, args[1:], stdout, stderr)
	case "demo-data":
		err = cmdDemoData(ctx, args[1:], stdout, stderr)
	case "load":
		err = cmdLoad(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "insightd %s\n", version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "insightd: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "insightd: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "insightd %s: %v\n", args[0], err)
		return 1
	}
}

// storeFlags are the flags of every command that touches the stores.
type storeFlags struct {
	meta     metadata.Config
	olap     olap.Config
	dataDir  string
	logLevel string
	withOLAP bool
}

func addStoreFlags(fs *flag.FlagSet, withOLAP bool) (*storeFlags, error) {
	f := &storeFlags{withOLAP: withOLAP}
	var err error
	if f.meta, err = metadata.ConfigFromEnv(); err != nil {
		return nil, err
	}
	fs.StringVar(&f.meta.DatabaseURL, "database-url", f.meta.DatabaseURL, "PostgreSQL URL (env DATABASE_URL)")
	f.logLevel = envOr("INSIGHTD_LOG_LEVEL", "info")
	fs.StringVar(&f.logLevel, "log-level", f.logLevel, "debug, info, warn or error (env INSIGHTD_LOG_LEVEL)")
	if !withOLAP {
		return f, nil
	}
	if f.olap, err = olap.ConfigFromEnv(); err != nil {
		return nil, err
	}
	f.dataDir = envOr("INSIGHTD_DATA_DIR", ".data")
	fs.StringVar(&f.olap.ClickHouseURL, "clickhouse-url", f.olap.ClickHouseURL, "ClickHouse server URL; empty = embedded chDB (env CLICKHOUSE_URL)")
	fs.StringVar(&f.olap.ChDBLib, "chdb-lib", f.olap.ChDBLib, "path of libchdb.so (env INSIGHTD_CHDB_LIB)")
	fs.StringVar(&f.dataDir, "data-dir", f.dataDir, "data directory; the embedded ClickHouse lives in <dir>/olap (env INSIGHTD_DATA_DIR)")
	fs.DurationVar(&f.olap.QueryTimeout, "query-timeout", f.olap.QueryTimeout, "longest a query may run (env INSIGHTD_QUERY_TIMEOUT)")
	return f, nil
}

// finish applies flag values that derive others, and validates.
func (f *storeFlags) finish() error {
	if f.dataDir != "" {
		f.olap.DataDir = filepath.Join(f.dataDir, "olap")
	}
	if !f.withOLAP {
		return f.meta.Validate()
	}
	return errors.Join(f.meta.Validate(), f.olap.Validate())
}

func (f *storeFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", errUsage, f.logLevel)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})), nil
}

// start validates the flags, then opens the logger and the stores (the
// engine only for commands that have OLAP flags); the caller closes them.
func (f *storeFlags) start(ctx context.Context, stderr io.Writer) (*slog.Logger, *metadata.Store, olap.Engine, error) {
	if err := f.finish(); err != nil {
		return nil, nil, nil, err
	}
	log, err := f.logger(stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	store, engine, err := f.open(ctx, log)
	return log, store, engine, err
}

func (f *storeFlags) open(ctx context.Context, log *slog.Logger) (*metadata.Store, olap.Engine, error) {
	store, err := metadata.Open(ctx, f.meta)
	if err != nil {
		return nil, nil, err
	}
	if !f.withOLAP {
		return store, nil, nil
	}
	engine, err := olap.Open(ctx, f.olap, log)
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("ClickHouse: %w", err)
	}
	return store, engine, nil
}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: insightd %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

func envOr(k, def string) string {
	if v := strings.TrimSpace(os.Getenv(k)); v != "" {
		return v
	}
	return def
}

func migrateAll(ctx context.Context, log *slog.Logger, store *metadata.Store, engine olap.Engine) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	pg, err := store.Migrate(ctx)
	if err != nil {
		return err
	}
	ch, err := olap.Migrate(ctx, engine)
	if err != nil {
		return err
	}
	log.Info("migrated", "postgres_applied", pg, "clickhouse_applied", ch)
	return nil
}
