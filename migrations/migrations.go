// Package migrations holds insightd's schema changes as SQL files, embedded
// in the binary: postgres/NNNN_name.sql for the metadata store and
// clickhouse/NNNN_name.sql for events and persons. Each store records the
// versions it applied, so running migrations twice is a no-op. Files are
// never edited once released; a change is a new file.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed postgres/*.sql clickhouse/*.sql
var files embed.FS

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Postgres returns the metadata store's migrations in version order.
func Postgres() ([]Migration, error) { return load("postgres") }

// ClickHouse returns the events store's migrations in version order.
func ClickHouse() ([]Migration, error) { return load("clickhouse") }

func load(dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s/%s: name must be NNNN_description.sql", dir, name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, name, v)
		}
		seen[v] = name
		b, err := files.ReadFile(path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: rest, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Statements splits the file into statements at semicolons outside quotes,
// identifiers and comments. ClickHouse runs one statement per call.
func (m Migration) Statements() []string {
	var out []string
	s := m.SQL
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '"', '`':
			q := s[i]
			for i++; i < len(s) && s[i] != q; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '-':
			if i+1 < len(s) && s[i+1] == '-' {
				for i < len(s) && s[i] != '\n' {
					i++
				}
			}
		case '/':
			if i+1 < len(s) && s[i+1] == '*' {
				end := strings.Index(s[i+2:], "*/")
				if end < 0 {
					i = len(s)
				} else {
					i += end + 3
				}
			}
		case ';':
			out = appendStatement(out, s[start:i])
			start = i + 1
		}
	}
	return appendStatement(out, s[start:])
}

func appendStatement(out []string, s string) []string {
	// Drop statements that are only comments and space.
	body := s
	for {
		body = strings.TrimSpace(body)
		if strings.HasPrefix(body, "--") {
			if nl := strings.IndexByte(body, '\n'); nl >= 0 {
				body = body[nl+1:]
				continue
			}
			body = ""
		}
		break
	}
	if body == "" {
		return out
	}
	return append(out, strings.TrimSpace(s))
}
