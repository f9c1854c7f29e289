package metadatatest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Private is a PostgreSQL server of the test's own, for tests that do to
// the server what must not happen to the shared one: freeze it, stop it.
type Private struct {
	URL  string // of database "insightd", empty and not migrated
	cmd  *exec.Cmd
	dir  string
	cred *syscall.Credential
	// server makes the server's command (same port and files), for Start.
	server func() *exec.Cmd
}

// StartPrivate initialises a cluster in a temporary directory and starts
// its server on a free port (as the postgres system user when the test
// runs as root, since PostgreSQL refuses root). The server stops, and its
// files go, when the test ends. The binaries are Debian's
// (/usr/lib/postgresql/<version>/bin), which make test installs.
func StartPrivate(t testing.TB) *Private {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Fatal("no PostgreSQL binaries in /usr/lib/postgresql: run `make test`, which installs them")
	}
	sort.Strings(bins)
	bin := filepath.Dir(bins[len(bins)-1])
	p := &Private{}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Not t.TempDir: its parents are private to the test's user.
	dir, err := os.MkdirTemp("/var/tmp", "insightd-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if p.cred != nil {
		if err := os.Chown(dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := p.command(bin+"/initdb", "-D", data, "-U", "insightd", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := freePort(t)
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	p.server = func() *exec.Cmd {
		cmd := p.command(bin+"/postgres", "-D", data, "-p", strconv.Itoa(port), "-k", dir,
			"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=50")
		cmd.Stdout, cmd.Stderr = logf, logf
		return cmd
	}
	p.cmd = p.server()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		p.signal(syscall.SIGCONT)
		p.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.signal(syscall.SIGKILL)
			<-done
		}
		logf.Close()
	})
	base := fmt.Sprintf("postgres://insightd@127.0.0.1:%d/%%s?sslmode=disable&connect_timeout=5", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, _ := sql.Open("postgres", fmt.Sprintf(base, "postgres"))
		_, err = db.ExecContext(context.Background(), "CREATE DATABASE insightd")
		db.Close()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("PostgreSQL did not start: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.URL = fmt.Sprintf(base, "insightd")
	return p
}

func (p *Private) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	cmd.Dir = p.dir
	return cmd
}

// Stop shuts the server down (fast shutdown: sessions are ended) and
// waits for it to exit; until Start, connections are refused.
func (p *Private) Stop(t testing.TB) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("PostgreSQL did not stop within 30s")
	}
}

// Start runs a stopped server again on the same port and files, and
// waits until it accepts connections.
func (p *Private) Start(t testing.TB) {
	t.Helper()
	p.cmd = p.server()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, _ := sql.Open("postgres", p.URL)
		err := db.PingContext(context.Background())
		db.Close()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PostgreSQL did not start again: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Freeze stops every process of the server (SIGSTOP): its kernel still
// accepts connections and data, but nothing answers.
func (p *Private) Freeze() { p.signal(syscall.SIGSTOP) }

// Thaw lets the server run again (SIGCONT).
func (p *Private) Thaw() { p.signal(syscall.SIGCONT) }

// signal sends sig to the postmaster and every process it started (each
// backend puts itself in its own session, so the process group is not
// enough).
func (p *Private) signal(sig syscall.Signal) {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	pids := []int{p.cmd.Process.Pid}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// the last parenthesis.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(p.cmd.Process.Pid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		syscall.Kill(pid, sig)
	}
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
