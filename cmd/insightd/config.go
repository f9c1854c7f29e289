package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Configuration is read here and nowhere else: every setting is a flag,
// and has an environment variable (the table below); a flag given on the
// command line wins over its variable. The packages take plain Config
// structs with defaults and never read the environment themselves.
// Flags that are a command's arguments (a project id, an email) have no
// variable.

// envNames maps each setting's flag to its environment variable.
var envNames = map[string]string{
	"database-url":       "DATABASE_URL",
	"postgres-timeout":   "INSIGHTD_POSTGRES_TIMEOUT",
	"auth-cache-ttl":     "INSIGHTD_AUTH_CACHE_TTL",
	"outage-memory":      "INSIGHTD_OUTAGE_MEMORY",
	"log-level":          "INSIGHTD_LOG_LEVEL",
	"clickhouse-url":     "CLICKHOUSE_URL",
	"clickhouse-cluster": "INSIGHTD_CLICKHOUSE_CLUSTER",
	"chdb-lib":           "INSIGHTD_CHDB_LIB",
	"data-dir":           "INSIGHTD_DATA_DIR",
	"query-timeout":      "INSIGHTD_QUERY_TIMEOUT",
	"olap-connections":   "INSIGHTD_OLAP_CONNECTIONS",
	"project-analyses":   "INSIGHTD_PROJECT_ANALYSES",
	"queue-wait":         "INSIGHTD_QUEUE_WAIT",
	"addr":               "INSIGHTD_ADDR",
	"body-limit":         "INSIGHTD_BODY_LIMIT",
	"max-query-memory":   "INSIGHTD_MAX_QUERY_MEMORY",
	"max-result-rows":    "INSIGHTD_MAX_RESULT_ROWS",
	"max-rows-read":      "INSIGHTD_MAX_ROWS_READ",
	"max-join-rows":      "INSIGHTD_MAX_JOIN_ROWS",
	"max-join-memory":    "INSIGHTD_MAX_JOIN_MEMORY",
	"ingest-max-events":  "INSIGHTD_INGEST_MAX_EVENTS",
	"ingest-linger":      "INSIGHTD_INGEST_LINGER",
	"ingest-inserts":     "INSIGHTD_INGEST_INSERTS",
	"header-timeout":     "INSIGHTD_HEADER_TIMEOUT",
	"body-read-timeout":  "INSIGHTD_BODY_READ_TIMEOUT",
	"body-min-rate":      "INSIGHTD_BODY_MIN_RATE",
	"idle-timeout":       "INSIGHTD_IDLE_TIMEOUT",
	"max-connections":    "INSIGHTD_MAX_CONNECTIONS",
	"memory-limit":       "INSIGHTD_MEMORY_LIMIT",
	"pprof-addr":         "INSIGHTD_PPROF_ADDR",
	"metrics-addr":       "INSIGHTD_METRICS_ADDR",
	"geoip-db":           "INSIGHTD_GEOIP_DB",
	"geoip-persons":      "INSIGHTD_GEOIP_PERSONS",
	// import's ends: the keys above all belong in the environment.
	"from":         "INSIGHTD_IMPORT_FROM",
	"from-key":     "INSIGHTD_IMPORT_FROM_KEY",
	"from-project": "INSIGHTD_IMPORT_FROM_PROJECT",
	"to":           "INSIGHTD_IMPORT_TO",
	"to-key":       "INSIGHTD_IMPORT_TO_KEY",
	"to-project":   "INSIGHTD_IMPORT_TO_PROJECT",
}

// applyEnv sets each flag of fs from its variable, when the variable is
// set and not blank, so that parsing the command line then overrides it.
// A value that does not parse is an error naming the variable.
func applyEnv(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil {
			return
		}
		name, ok := envNames[f.Name]
		if !ok {
			return
		}
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%w: %s=%q: %v", errUsage, name, v, e)
		}
	})
	return err
}

// describeEnv appends "(env NAME)" to the usage text of every setting.
func describeEnv(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if name, ok := envNames[f.Name]; ok && !strings.Contains(f.Usage, "(env ") {
			f.Usage += " (env " + name + ")"
		}
	})
}

// seconds is a duration flag that also takes a bare number of seconds.
type seconds struct{ d *time.Duration }

func (s seconds) String() string {
	if s.d == nil {
		return ""
	}
	return s.d.String()
}

func (s seconds) Set(v string) error {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		*s.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want a duration such as 30s or 1m, or seconds")
	}
	*s.d = d
	return nil
}

func durationVar(fs *flag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(seconds{p}, name, usage)
}

// bytesValue is a size flag: a number of bytes, or with a KiB, MiB, GiB
// (or KB, MB, GB, read as powers of 1024 too) suffix.
type bytesValue struct{ n *int64 }

func (b bytesValue) String() string {
	if b.n == nil {
		return ""
	}
	return strconv.FormatInt(*b.n, 10)
}

func (b bytesValue) Set(v string) error {
	s := strings.ToUpper(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("want a size such as 4GiB or a number of bytes")
	}
	*b.n = n * mult
	return nil
}

func bytesVar(fs *flag.FlagSet, p *int64, name string, def int64, usage string) {
	*p = def
	fs.Var(bytesValue{p}, name, usage)
}

// setMemoryLimit gives the Go runtime a soft limit on its heap, so that
// garbage collection works harder rather than letting the process grow
// past it: limit bytes, or when 0 a quarter of the machine's memory (the
// embedded engine's memory is its own, bounded by the query limits). A
// GOMEMLIMIT in the environment is the runtime's own setting and wins.
func setMemoryLimit(limit int64) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	if limit == 0 {
		var si syscall.Sysinfo_t
		if syscall.Sysinfo(&si) != nil {
			return debug.SetMemoryLimit(-1)
		}
		limit = int64(si.Totalram) * int64(si.Unit) / 4
	}
	debug.SetMemoryLimit(limit)
	return limit
}
