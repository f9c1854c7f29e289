package api

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// echartsMinSHA256 is the checksum of echarts 5.6.0's dist/echarts.min.js
// as npm ships it (scripts/vendor-echarts.sh checks the same).
const echartsMinSHA256 = "bf4a223524e40b77c304bec67e1222cf551f14880cf42c69dc046558e11c07b1"

func TestConsoleAddsUnderOneMegabyteGzipped(t *testing.T) {
	assets, err := loadConsoleAssets()
	if err != nil {
		t.Fatal(err)
	}
	total := assets.gzippedSize()
	t.Logf("console: %d files, %d bytes gzipped", len(assets), total)
	if total >= 1<<20 {
		t.Fatalf("the console's gzipped files take %d bytes, want under 1 MiB", total)
	}
	for _, name := range []string{"index.html", "style.css", "js/app.js", "js/charts.js", "vendor/echarts-5.6.0.min.js"} {
		if assets[name] == nil {
			t.Errorf("%s is not embedded", name)
		}
	}
}

func TestConsoleVendorsThePinnedECharts(t *testing.T) {
	b, err := consoleFS.ReadFile("console/vendor/echarts-5.6.0.min.js.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != echartsMinSHA256 {
		t.Fatalf("vendored echarts has checksum %x, want the release's %s", sum, echartsMinSHA256)
	}
}

func TestConsoleServesItsFiles(t *testing.T) {
	h := newServer(t, quietLog()).Handler()
	get := func(path string, headers ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	inflate := func(t *testing.T, b []byte) string {
		t.Helper()
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}

	t.Run("the page at / is gzipped for a browser, revalidated and locked down", func(t *testing.T) {
		w := get("/", "Accept-Encoding", "gzip, deflate, br")
		if w.Code != 200 || w.Header().Get("Content-Encoding") != "gzip" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("%d %v", w.Code, w.Header())
		}
		if body := inflate(t, w.Body.Bytes()); !strings.Contains(body, `<script type="module" src="/console/js/app.js">`) {
			t.Fatalf("page %q", body)
		}
		if w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("ETag") == "" ||
			!strings.Contains(w.Header().Get("Content-Security-Policy"), "script-src 'self'") {
			t.Fatalf("headers %v", w.Header())
		}
		again := get("/", "Accept-Encoding", "gzip", "If-None-Match", w.Header().Get("ETag"))
		if again.Code != 304 || again.Body.Len() != 0 {
			t.Fatalf("revalidation: %d, %d bytes", again.Code, again.Body.Len())
		}
	})
	t.Run("a client without gzip gets the file inflated", func(t *testing.T) {
		w := get("/console/js/app.js")
		if w.Code != 200 || w.Header().Get("Content-Encoding") != "" || !strings.Contains(w.Body.String(), "import ") ||
			!strings.Contains(w.Header().Get("Content-Type"), "javascript") {
			t.Fatalf("%d %v %q", w.Code, w.Header(), w.Body.String()[:min(80, w.Body.Len())])
		}
		if w := get("/console/js/app.js", "Accept-Encoding", "gzip;q=0"); w.Header().Get("Content-Encoding") != "" {
			t.Fatal("gzip;q=0 was answered gzipped")
		}
	})
	t.Run("the versioned chart library is cached for good", func(t *testing.T) {
		w := get("/console/vendor/echarts-5.6.0.min.js", "Accept-Encoding", "gzip")
		if w.Code != 200 || w.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" ||
			!strings.Contains(inflate(t, w.Body.Bytes())[:4096], "echarts") {
			t.Fatalf("%d %v", w.Code, w.Header())
		}
	})
	t.Run("an unknown file is the API's 404", func(t *testing.T) {
		for _, path := range []string{"/console/nothing.js", "/console/../server.go", "/console/vendor/echarts-5.6.0.min.js.gz"} {
			w, body := do(t, h, httptest.NewRequest("GET", path, nil))
			wantError(t, w, body, 404, "not_found")
		}
	})
}
