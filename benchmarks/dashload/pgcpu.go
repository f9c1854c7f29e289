package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// pgCPU reads the CPU time the local PostgreSQL cluster has used: its
// postmaster's, its reaped children's and its live children's (the
// backends serving the warm retrieves' round trips are one of the
// latter). The warm retrieves' latency is the machine's CPU per
// retrieve times the clients over the cores, and PostgreSQL's share is
// not in the process's own CPU time. Zero when PostgreSQL is not a
// local process this one may read (/proc).
type pgCPU struct{ postmaster int }

func newPGCPU(ctx context.Context, db *sqlx.DB) pgCPU {
	var backend int
	if err := db.GetContext(ctx, &backend, "SELECT pg_backend_pid()"); err != nil {
		return pgCPU{}
	}
	f := statFields(backend)
	if len(f) < 2 {
		return pgCPU{}
	}
	ppid, _ := strconv.Atoi(f[1])
	return pgCPU{postmaster: ppid}
}

// used is the cluster's CPU time so far.
func (p pgCPU) used() time.Duration {
	if p.postmaster == 0 {
		return 0
	}
	ticks := func(f []string, from, to int) (n int64) {
		for i := from; i <= to && i < len(f); i++ {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			n += v
		}
		return n
	}
	// Fields after the command: 1 ppid, 11-12 utime and stime, 13-14
	// cutime and cstime (man 5 proc, counted from state as 0).
	total := ticks(statFields(p.postmaster), 11, 14)
	procs, _ := os.ReadDir("/proc")
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == p.postmaster {
			continue
		}
		if f := statFields(pid); len(f) > 12 && f[1] == strconv.Itoa(p.postmaster) {
			total += ticks(f, 11, 12)
		}
	}
	// USER_HZ is 100 on every Linux this runs on.
	return time.Duration(total) * 10 * time.Millisecond
}

// statFields are /proc/pid/stat's fields after the command name (which
// may hold spaces), starting with the state.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
