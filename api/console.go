package api

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
)

// The web console: static files embedded in the binary, served at / and
// under /console/. It is a client of the public API like any other (the
// browser keeps a personal API key in session storage and sends it as a
// Bearer token), so it needs no route of its own beyond its files.
//
// Files are kept gzipped in memory: the vendored chart library is
// committed gzipped (console/vendor/*.gz, see scripts/vendor-echarts.sh)
// and the console's own files are compressed once when the handler is
// built. A browser that does not accept gzip gets them inflated.
//
//go:embed console/index.html console/style.css console/js console/vendor
var consoleFS embed.FS

// consoleAsset is one file ready to serve.
type consoleAsset struct {
	gz          []byte
	contentType string
	etag        string
	// immutable files carry their version in their name (the vendored
	// library); the console's own files are revalidated by ETag.
	immutable bool
}

// consoleAssets maps a path under console/ (without .gz) to its file.
type consoleAssets map[string]*consoleAsset

// loadConsoleAssets reads and compresses the embedded files.
func loadConsoleAssets() (consoleAssets, error) {
	out := consoleAssets{}
	err := fs.WalkDir(consoleFS, "console", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := consoleFS.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "console/")
		a := &consoleAsset{gz: b}
		if strings.HasSuffix(name, ".gz") {
			name = strings.TrimSuffix(name, ".gz")
			a.immutable = true
		} else if a.gz, err = gzipBytes(b); err != nil {
			return err
		}
		a.contentType = mime.TypeByExtension(path.Ext(name))
		if a.contentType == "" {
			a.contentType = "application/octet-stream"
		}
		sum := sha256.Sum256(a.gz)
		a.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
		out[name] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console assets: %w", err)
	}
	if out["index.html"] == nil {
		return nil, fmt.Errorf("console assets: index.html is missing")
	}
	return out, nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzippedSize is what the console adds to a response stream at most:
// the sum of its gzipped files.
func (a consoleAssets) gzippedSize() int {
	n := 0
	for _, f := range a {
		n += len(f.gz)
	}
	return n
}

// consoleRoutes serves the console's page at / and its files under
// /console/.
func (s *Server) consoleRoutes(r *gin.Engine) {
	assets, err := loadConsoleAssets()
	if err != nil {
		// The files are compiled in: this only fails on a broken build.
		s.log.Error("web console disabled", "error", err)
		return
	}
	r.GET("/", func(c *gin.Context) { assets.serve(c, "index.html") })
	r.GET("/console/*file", func(c *gin.Context) { assets.serve(c, strings.TrimPrefix(c.Param("file"), "/")) })
}

// serve writes one file, gzipped when the client accepts it.
func (a consoleAssets) serve(c *gin.Context, name string) {
	f := a[name]
	if f == nil {
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	h.Add("Vary", "Accept-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	if f.immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if name == "index.html" {
		// The page holds an API key in session storage: no script but
		// its own, and no framing.
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "+
			"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("Referrer-Policy", "no-referrer")
	}
	if match := c.GetHeader("If-None-Match"); match != "" && strings.Contains(match, f.etag) {
		c.Status(http.StatusNotModified)
		return
	}
	if acceptsGzip(c.GetHeader("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", fmt.Sprint(len(f.gz)))
		c.Status(http.StatusOK)
		c.Writer.Write(f.gz)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(f.gz))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.Status(http.StatusOK)
	io.Copy(c.Writer, zr)
}

// acceptsGzip reads an Accept-Encoding header: gzip listed without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") || strings.TrimSpace(coding) == "*" {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
