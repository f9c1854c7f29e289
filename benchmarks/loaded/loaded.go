// Package loaded serves the real API over a loaded project in-process, for
// the analysis benchmarks (trendload, funnelload). Only one process may
// open the embedded engine's directory, so the program that times queries
// straight on the engine also serves the HTTP endpoints it compares them
// with. It also holds what every benchmark program shares: Median, Ms,
// CPUTime and Check, and the method the results rest on (rounds.go):
// ways timed round by round (Way), taking turns at going first (Rotate),
// references and floors with their result discarded (Discard), ratios
// taken within rounds (PerRound), medians with their range (Spread).
package loaded

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// Flags are the command line every analysis benchmark takes.
type Flags struct {
	DataDir, DatabaseURL, ChDBLib, End *string
	Project                            *int64
	Runs, Days                         *int
	// Metrics serves the API twice, with and without metrics, for the
	// benchmarks to time the same requests both ways (Env.MetricsURL).
	Metrics *bool
}

// RegisterFlags declares the flags on the default flag set; what names
// the analysis in the help (trend, funnel).
func RegisterFlags(what string) *Flags {
	return &Flags{
		DataDir:     flag.String("data-dir", os.Getenv("INSIGHTD_DATA_DIR"), "data directory of the loaded project (its olap/ holds the engine)"),
		DatabaseURL: flag.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL of a fresh database (the project is bootstrapped there)"),
		ChDBLib:     flag.String("chdb-lib", os.Getenv("INSIGHTD_CHDB_LIB"), "path of libchdb.so"),
		Project:     flag.Int64("project", 1, "the loaded project id; the bootstrapped project must have it"),
		Runs:        flag.Int("runs", 7, "timed rounds (at least 7: medians and ranges of fewer say little)"),
		Days:        flag.Int("days", 30, "days in the "+what+": the last complete days before -end"),
		End:         flag.String("end", time.Now().UTC().Format(time.DateOnly), "first day not in the range (YYYY-MM-DD)"),
		Metrics:     flag.Bool("metrics", false, "also time each HTTP request on a second server with Prometheus metrics on, round by round with the one without"),
	}
}

// Env is the engine, the metadata store and the API serving them.
type Env struct {
	Engine *olap.Embedded
	Store  *metadata.Store
	// Project is the loaded project as the query builder sees it; Key a
	// personal API key of its user.
	Project querybuilder.Project
	Key     string
	// InsightsURL is http://<addr>/api/projects/<id>/insights/.
	InsightsURL string
	// MetricsURL is InsightsURL on a server of the same engine and store
	// with metrics on, when -metrics is given; else empty.
	MetricsURL string
	Client     *http.Client
	// From and To are the first and last days of the range.
	From, To string
	Runs     int
	close    []func()
}

// Open checks the flags, opens the engine and the store, bootstraps the
// project and serves the API on a loopback port.
func Open(ctx context.Context, f *Flags) (*Env, error) {
	end, err := time.Parse(time.DateOnly, *f.End)
	if err != nil || *f.DataDir == "" || *f.DatabaseURL == "" || *f.ChDBLib == "" || *f.Runs < 1 {
		return nil, errors.New("need -data-dir, -database-url, -chdb-lib, -runs >= 1 and -end YYYY-MM-DD")
	}
	e := &Env{Runs: *f.Runs, Client: &http.Client{Timeout: 10 * time.Minute},
		From: end.AddDate(0, 0, -*f.Days).Format(time.DateOnly), To: end.AddDate(0, 0, -1).Format(time.DateOnly)}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if e.Engine, err = olap.OpenEmbedded(olap.Config{ChDBLib: *f.ChDBLib, DataDir: filepath.Join(*f.DataDir, "olap"),
		QueryTimeout: 10 * time.Minute, Connections: 4}, log); err != nil {
		return nil, err
	}
	e.close = append(e.close, func() { e.Engine.Close() })
	// The loaded data may predate later migrations: apply them (each runs
	// once; a table added since is filled from the events then).
	if _, err := olap.Migrate(ctx, e.Engine); err != nil {
		e.Close()
		return nil, err
	}
	if e.Store, err = metadata.Open(ctx, metadata.Config{DatabaseURL: *f.DatabaseURL, MaxOpenConns: 10}); err != nil {
		e.Close()
		return nil, err
	}
	e.close = append(e.close, func() { e.Store.Close() })
	if err := e.serve(ctx, log, *f.Project, f.Metrics != nil && *f.Metrics); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Env) serve(ctx context.Context, log *slog.Logger, project int64, withMetrics bool) error {
	if _, err := e.Store.Migrate(ctx); err != nil {
		return err
	}
	b, err := e.Store.Bootstrap(ctx, "bench@example.com", "Bench", "Bench")
	if err != nil {
		return err
	}
	if b.ProjectID != project {
		return fmt.Errorf("the bootstrapped project is %d, not %d: use a fresh database", b.ProjectID, project)
	}
	p, err := e.Store.ProjectForUser(ctx, b.UserID, project)
	if err != nil {
		return err
	}
	e.Project, e.Key = querybuilder.Project{ID: p.ID, Timezone: p.Timezone}, b.PersonalAPIKey
	if e.InsightsURL, err = e.listen(ctx, log, project, nil); err != nil || !withMetrics {
		return err
	}
	e.MetricsURL, err = e.listen(ctx, log, project, metrics.New())
	return err
}

// listen serves the API, with m when not nil, on a loopback port and
// answers its insights URL.
func (e *Env) listen(ctx context.Context, log *slog.Logger, project int64, m *metrics.Metrics) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	cfg := api.Config{Addr: ln.Addr().String(), BodyLimit: 20 << 20, ShutdownTimeout: 5 * time.Second,
		Limits: querybuilder.DefaultLimits(), Schema: querybuilder.DefaultSchema(), Metrics: m}
	srvCtx, stop := context.WithCancel(ctx)
	go api.New(cfg, log, e.Store, e.Engine).Serve(srvCtx, ln) //nolint:errcheck // stopped by Close
	e.close = append(e.close, stop)
	return fmt.Sprintf("http://%s/api/projects/%d/insights/", ln.Addr(), project), nil
}

// Close stops the server and closes the store and the engine.
// Generated is the statement the endpoint of analysis kind runs for
// body, with the facts it reads from the engine and the server's default
// limits.
func (e *Env) Generated(ctx context.Context, kind string, body []byte) (querybuilder.Statement, error) {
	k, ok := querybuilder.ByName(kind)
	if !ok {
		return querybuilder.Statement{}, fmt.Errorf("no analysis kind %q", kind)
	}
	params, err := querybuilder.ParseBody(body)
	if err != nil {
		return querybuilder.Statement{}, err
	}
	q, err := k.Parse(params, querybuilder.Env{Project: e.Project, Now: time.Now()})
	if err != nil {
		return querybuilder.Statement{}, err
	}
	f, err := olap.ReadFacts(ctx, e.Engine, querybuilder.DefaultSchema(), e.Project.ID, q.Needs())
	if err != nil {
		return querybuilder.Statement{}, err
	}
	stmt, err := q.Build(f)
	if err != nil {
		return querybuilder.Statement{}, err
	}
	return querybuilder.WithLimits(stmt, querybuilder.DefaultLimits()), nil
}

func (e *Env) Close() {
	for i := len(e.close) - 1; i >= 0; i-- {
		e.close[i]()
	}
	e.close = nil
}

// Median is the middle of durations (the mean of the two middle ones for
// an even count).
func Median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Start parses the command line (every flag must be declared first) and
// opens the environment, or exits naming the problem after program.
func Start(program string, f *Flags) *Env {
	flag.Parse()
	env, err := Open(context.Background(), f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
		os.Exit(2)
	}
	return env
}

// Check exits naming the program when err is not nil: the benchmarks'
// answer to errors they cannot go on after.
func Check(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
}

// CPUTime is the CPU time this process has used (user and system, all
// threads: the engine's included). On a shared machine it says what a
// round cost better than the wall time, which the neighbours stretch.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
