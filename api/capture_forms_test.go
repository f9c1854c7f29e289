package api

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// seedAnswers is what each seed of FuzzCaptureRequest's corpus must be
// answered: the fuzz target only holds the server to capture's promises,
// this says the seeds are the body forms their names say. Crashers the
// fuzzer found are checked in beside them, named crash-*, and must get a
// 4xx.
var seedAnswers = map[string]struct {
	status int
	attr   string // for a 4xx, the field it names
}{
	"json-batch":                      {status: 200},
	"json-single-event":               {status: 200},
	"json-list-text-plain":            {status: 200},
	"json-identify-and-groups":        {status: 200},
	"gzip-content-encoding":           {status: 200},
	"gzip-js-query":                   {status: 200},
	"gzip-sniffed":                    {status: 200},
	"base64-body":                     {status: 200},
	"form-data-base64":                {status: 200},
	"form-data-base64-unescaped-plus": {status: 200},
	"form-data-json":                  {status: 200},
	"form-data-lz64":                  {status: 200},
	"lz64-body-query-hint":            {status: 200},
	"headers-and-token-query":         {status: 200},
	"preflight":                       {status: 204},
	"gzip-truncated":                  {status: 400},
	"empty-body":                      {status: 400},
	"empty-form":                      {status: 400},
	"form-encoded-json":               {status: 400, attr: "data"},
	"form-without-data":               {status: 400, attr: "data"},
	"form-data-garbage":               {status: 400, attr: "data"},
	"bad-event-field":                 {status: 400, attr: "batch[1].event"},
	"unknown-token":                   {status: 401},
	"get-is-405":                      {status: 405},
}

// The seeds get their answers with metrics on, where an empty or a
// form-encoded JSON body answered 500 (issue 38): every form PostHog's
// capture reads is stored, and the rest are 4xx naming what is wrong.
func TestCaptureFuzzSeedsAreTheBodyFormsTheirNamesSay(t *testing.T) {
	fx := newTokenFixture(t)
	dir := filepath.Join("testdata", "fuzz", "FuzzCaptureRequest")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := file.Name()
		t.Run(name, func(t *testing.T) {
			in := readCaptureSeed(t, filepath.Join(dir, name))
			want, ok := seedAnswers[name]
			switch {
			case strings.HasPrefix(name, "crash-"):
				want.status = 400
			case !ok:
				t.Fatalf("seed %s has no expected answer in seedAnswers", name)
			}
			seen[name] = true
			r, err := in.request()
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			fx.h.ServeHTTP(w, r)
			if w.Code != want.status && !(strings.HasPrefix(name, "crash-") && w.Code/100 == 4) {
				t.Fatalf("answered %d %s, want %d", w.Code, w.Body.String(), want.status)
			}
			if w.Code >= 400 {
				if e := wantErrorBody(t, w); want.attr != "" && e["attr"] != want.attr {
					t.Fatalf("attr %v, want %s: %v", e["attr"], want.attr, e)
				}
			}
		})
	}
	for name := range seedAnswers {
		if !seen[name] {
			t.Errorf("seed %s is expected but not in %s", name, dir)
		}
	}
	if n := fx.logs.n.Load(); n > 0 {
		t.Fatalf("the server reported %d panic(s)", n)
	}
	if got := projectEvents(t, fx.project); got == 0 {
		t.Fatal("the accepted seeds stored nothing")
	}
}

// readCaptureSeed reads a corpus file ("go test fuzz v1", then one Go
// literal per argument of FuzzCaptureRequest, in order).
func readCaptureSeed(t *testing.T, path string) captureInput {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 9 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a corpus file of 8 values", path)
	}
	lit := func(i int, typ string) string {
		l := lines[i]
		if !strings.HasPrefix(l, typ+"(") || !strings.HasSuffix(l, ")") {
			t.Fatalf("%s line %d: want %s(...), got %s", path, i+1, typ, l)
		}
		return l[len(typ)+1 : len(l)-1]
	}
	str := func(i int, typ string) string {
		s, err := strconv.Unquote(lit(i, typ))
		if err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		return s
	}
	var in captureInput
	in.method = str(1, "string")
	p, err := strconv.Unquote(lit(2, "byte"))
	if err != nil || len([]rune(p)) != 1 || []rune(p)[0] > 0xff {
		t.Fatalf("%s: path: %v", path, err)
	}
	in.path = uint8([]rune(p)[0])
	in.slash = lit(3, "bool") == "true"
	in.ctype, in.cenc, in.header, in.query = str(4, "string"), str(5, "string"), str(6, "string"), str(7, "string")
	in.body = []byte(str(8, "[]byte"))
	return in
}
