// Command slowclients measures what idle and slow clients cost a normal
// one: a normal client sends -requests GET /_health and as many one-event
// POST /batch/ captures, one after the other on a keep-alive connection,
// quiet, and again while -idle keep-alive connections sit idle (each made
// one request) and -slow senders trickle a declared 100 kB body a byte
// every -gap (reconnecting whenever the server cuts one off). It reports
// the normal client's p50 and p99 per phase, round by round, then the
// median (min-max) over the rounds and the attack/quiet ratios taken
// within rounds; and, given -server-pid, the server's open files and
// resident memory while measuring. Rounds alternate which phase comes
// first, after one untimed warm-up round. It only talks to -addr
// (loopback), and raises its own file descriptor limit to the hard one.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type config struct {
	addr, token      string
	idle, slow, reqs int
	gap, settle      time.Duration
	pid              int
}

// phase is one phase's figures.
type phase struct {
	health, capture []time.Duration
	errors          int
	fds, rssMiB     int
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8101", "the server (loopback)")
	flag.StringVar(&cfg.token, "token", os.Getenv("INSIGHTD_TOKEN"), "a project's api_token for the captures (env INSIGHTD_TOKEN)")
	flag.IntVar(&cfg.idle, "idle", 10_000, "idle keep-alive connections held during the attack")
	flag.IntVar(&cfg.slow, "slow", 300, "slow-body senders during the attack")
	flag.DurationVar(&cfg.gap, "gap", 3*time.Second, "a slow sender sends a byte every gap")
	flag.IntVar(&cfg.reqs, "requests", 300, "requests of each kind the normal client sends per phase")
	flag.DurationVar(&cfg.settle, "settle", 3*time.Second, "how long the attack runs before the normal client starts")
	flag.IntVar(&cfg.pid, "server-pid", 0, "the server's process id, to read its open files and memory (optional)")
	rounds := flag.Int("rounds", 7, "timed rounds")
	flag.Parse()
	if cfg.token == "" {
		fmt.Fprintln(os.Stderr, "slowclients: -token or INSIGHTD_TOKEN is required")
		os.Exit(2)
	}
	limit := raiseFileLimit()
	fmt.Printf("normal client: %d GET /_health and %d one-event POST /batch/ per phase; attack: %d idle keep-alive connections, %d slow senders (a byte every %s); file limit of this process %d\n\n",
		cfg.reqs, cfg.reqs, cfg.idle, cfg.slow, cfg.gap, limit)
	fmt.Println("| round | phase | health p50 ms | health p99 ms | capture p50 ms | capture p99 ms | errors | server files | server RSS MiB | attack |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	var quiet, attacked []phase
	for r := 0; r <= *rounds; r++ {
		order := []bool{false, true}
		if r%2 == 1 {
			order = []bool{true, false}
		}
		for _, attack := range order {
			p, note := run(cfg, attack)
			if r == 0 {
				continue // warm-up
			}
			name := "quiet"
			if attack {
				name = "attack"
				attacked = append(attacked, p)
			} else {
				quiet = append(quiet, p)
			}
			fmt.Printf("| %d | %s | %s | %s | %s | %s | %d | %d | %d | %s |\n", r, name, ms(pct(p.health, 50)), ms(pct(p.health, 99)),
				ms(pct(p.capture, 50)), ms(pct(p.capture, 99)), p.errors, p.fds, p.rssMiB, note)
		}
	}
	fmt.Printf("\nmedian (min-max) over %d rounds, ms; ratios attack / quiet within each round\n\n", *rounds)
	fmt.Println("| figure | quiet | attack | attack / quiet |")
	fmt.Println("|---|---|---|---|")
	for _, f := range []struct {
		name string
		get  func(phase) time.Duration
	}{
		{"health p50", func(p phase) time.Duration { return pct(p.health, 50) }},
		{"health p99", func(p phase) time.Duration { return pct(p.health, 99) }},
		{"capture p50", func(p phase) time.Duration { return pct(p.capture, 50) }},
		{"capture p99", func(p phase) time.Duration { return pct(p.capture, 99) }},
	} {
		var q, a []time.Duration
		var ratio []float64
		for i := range quiet {
			q, a = append(q, f.get(quiet[i])), append(a, f.get(attacked[i]))
			ratio = append(ratio, float64(f.get(attacked[i]))/float64(f.get(quiet[i])))
		}
		fmt.Printf("| %s | %s | %s | %s |\n", f.name, spread(q), spread(a), spreadRatio(ratio))
	}
}

// run is one phase: the attack started (when attacked) and settled, then
// the normal client's requests.
func run(cfg config, attacked bool) (phase, string) {
	var a *attack
	if attacked {
		a = startAttack(cfg.addr, cfg.idle, cfg.slow, cfg.gap)
		time.Sleep(cfg.settle)
	}
	p := normal(cfg)
	p.fds, p.rssMiB = serverUsage(cfg.pid)
	note := ""
	if a != nil {
		held := a.held.Load()
		a.end()
		note = a.summary(held)
	}
	time.Sleep(2 * time.Second) // the server closes its side
	return p, note
}

// normal is the normal client: one keep-alive connection, requests one
// after the other, alternating the two kinds.
func normal(cfg config) phase {
	tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	base := "http://" + cfg.addr
	var p phase
	do := func(req *http.Request) (time.Duration, bool) {
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start), resp.StatusCode == http.StatusOK
	}
	for i := range cfg.reqs {
		req, _ := http.NewRequest(http.MethodGet, base+"/_health", nil)
		if d, ok := do(req); ok {
			p.health = append(p.health, d)
		} else {
			p.errors++
		}
		body := fmt.Sprintf(`{"api_key": %q, "batch": [{"event": "normal client", "distinct_id": "normal-%d"}]}`, cfg.token, i)
		req, _ = http.NewRequest(http.MethodPost, base+"/batch/", bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		if d, ok := do(req); ok {
			p.capture = append(p.capture, d)
		} else {
			p.errors++
		}
	}
	return p
}

// serverUsage is the server's open files and resident memory (MiB), or
// zeros without a pid.
func serverUsage(pid int) (fds, rssMiB int) {
	if pid == 0 {
		return 0, 0
	}
	if ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd")); err == nil {
		fds = len(ents)
	}
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.Atoi(f[1])
				rssMiB = kb / 1024
			}
		}
	}
	return fds, rssMiB
}

// raiseFileLimit lifts this process's soft descriptor limit to the hard
// one (Go does so at start too; this says what it is): the attack alone
// holds -idle + -slow descriptors.
func raiseFileLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	rl.Cur = rl.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	return rl.Cur
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func median(ds []time.Duration) time.Duration { return pct(ds, 50) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s (%s-%s)", ms(median(ds)), ms(slices.Min(ds)), ms(slices.Max(ds)))
}

func spreadRatio(rs []float64) string {
	if len(rs) == 0 {
		return "-"
	}
	s := slices.Clone(rs)
	slices.Sort(s)
	return fmt.Sprintf("%.2f (%.2f-%.2f)", s[len(s)/2], s[0], s[len(s)-1])
}
