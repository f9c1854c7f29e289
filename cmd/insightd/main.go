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
  insightd import --from URL --from-key K --from-project ID --to URL --to-key K --to-project ID
                                copy a PostHog project (or an insightd one) into insightd
  insightd version              print the version

Run "insightd <command> --help" for a command's flags; each setting can
also come from the environment variable its help names (a flag wins).
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
	case "import":
		err = cmdImport(ctx, args[1:], stdout, stderr)
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

// stores says which stores a command opens.
type stores int

const (
	usePostgres stores = 1 << iota
	useClickHouse
	useBoth = usePostgres | useClickHouse
)

// storeFlags are the flags of every command that touches the stores.
type storeFlags struct {
	meta     metadata.Config
	olap     olap.Config
	dataDir  string
	logLevel string
	uses     stores
}

func addStoreFlags(fs *flag.FlagSet, uses stores) (*storeFlags, error) {
	f := &storeFlags{uses: uses, meta: metadata.DefaultConfig(), olap: olap.DefaultConfig()}
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	if uses&usePostgres != 0 {
		fs.StringVar(&f.meta.DatabaseURL, "database-url", "", "PostgreSQL URL")
		durationVar(fs, &f.meta.AuthCacheTTL, "auth-cache-ttl", f.meta.AuthCacheTTL, "how long an authenticated API key is remembered (0: off); a deleted key works at most this long")
		durationVar(fs, &f.meta.OutageMemory, "outage-memory", f.meta.OutageMemory, "while PostgreSQL is down, keys, tokens and reads seen this recently are answered from memory (0: off)")
		durationVar(fs, &f.meta.RoundTrip, "postgres-timeout", f.meta.RoundTrip, "longest one exchange with PostgreSQL may take (connect, statement, socket read or write) before the request answers 503")
	}
	if uses&useClickHouse != 0 {
		fs.StringVar(&f.olap.ClickHouseURL, "clickhouse-url", "", "ClickHouse server URL; empty = embedded chDB")
		fs.StringVar(&f.olap.Cluster, "clickhouse-cluster", "", "ClickHouse cluster (remote_servers name) holding the sharded layout; needs --clickhouse-url (olap/cluster.md)")
		fs.StringVar(&f.olap.ChDBLib, "chdb-lib", f.olap.ChDBLib, "path of libchdb.so")
		fs.StringVar(&f.dataDir, "data-dir", ".data", "data directory; the embedded ClickHouse lives in <dir>/olap")
		durationVar(fs, &f.olap.QueryTimeout, "query-timeout", f.olap.QueryTimeout, "longest a ClickHouse query may run (a duration, or seconds)")
		fs.IntVar(&f.olap.Connections, "olap-connections", f.olap.Connections, "embedded engine: analyses that run at once (two more connections serve capture and health checks)")
		fs.IntVar(&f.olap.PerProject, "project-analyses", 0, "analyses one project may run at once (default half the connections); more wait, then answer 429")
		durationVar(fs, &f.olap.QueueWait, "queue-wait", 10*time.Second, "how long an analysis waits for its project's turn before answering 429")
	}
	return f, nil
}

// finish applies flag values that derive others, and validates.
func (f *storeFlags) finish() error {
	var errs []error
	if f.uses&usePostgres != 0 {
		errs = append(errs, f.meta.Validate())
	}
	if f.uses&useClickHouse != 0 {
		if f.dataDir != "" {
			f.olap.DataDir = filepath.Join(f.dataDir, "olap")
		}
		errs = append(errs, f.olap.Validate())
	}
	return errors.Join(errs...)
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
	var store *metadata.Store
	var engine olap.Engine
	var err error
	if f.uses&usePostgres != 0 {
		if store, err = metadata.Open(ctx, f.meta); err != nil {
			return nil, nil, err
		}
	}
	if f.uses&useClickHouse != 0 {
		if engine, err = olap.Open(ctx, f.olap, log); err != nil {
			if store != nil {
				store.Close()
			}
			return nil, nil, fmt.Errorf("ClickHouse: %w", err)
		}
	}
	return store, engine, nil
}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		describeEnv(fs)
		fmt.Fprintf(stderr, "Usage: insightd %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse reads the flags' environment variables, then the command line.
func parse(fs *flag.FlagSet, args []string) error {
	if err := applyEnv(fs); err != nil {
		return err
	}
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
