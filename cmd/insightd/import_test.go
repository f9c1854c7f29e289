package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Bad import flags are usage errors (status 2) naming the flag, before
// anything is read or written.
func TestImportFlags(t *testing.T) {
	ends := []string{"--from", "http://127.0.0.1:1", "--from-key", "k", "--from-project", "1", "--to", "http://127.0.0.1:1", "--to-key", "k", "--to-project", "2"}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--to", "http://x"}, "--from, --from-key, --from-project, --to-key, --to-project required"},
		{append(ends, "--only", "events,flags"), `unknown part "flags"`},
		{append(ends, "--since", "yesterday"), "--since"},
		{append(ends, "--page-size", "60000"), "--page-size"},
		{[]string{"--file", "x.jsonl", "--to", "http://x", "--to-key", "k", "--to-project", "2", "--only", "events"}, "takes no --from or --only"},
		{[]string{"--from", "ftp://x", "--from-key", "k", "--from-project", "1", "--to", "http://x", "--to-key", "k", "--to-project", "2"}, "not an http(s) URL"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"import"}, tc.args...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%v: status %d, stderr %q, want 2 and %q", tc.args, code, stderr.String(), tc.says)
		}
	}
	t.Setenv("INSIGHTD_IMPORT_TO_PROJECT", "x")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"import"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "INSIGHTD_IMPORT_TO_PROJECT") {
		t.Errorf("a bad variable: %d %q", code, stderr.String())
	}
}
