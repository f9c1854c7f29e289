package api

import (
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

const requestIDHeader = "X-Request-Id"

var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// requestID keeps a well-formed client X-Request-Id or makes one, and
// echoes it in the response.
func requestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader(requestIDHeader)
		if !clientRequestID.MatchString(id) {
			b := make([]byte, 12)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		c.Set("request_id", id)
		c.Header(requestIDHeader, id)
		c.Next()
	}
}

// logRequests writes one JSON line per request: id, method, path, status,
// duration and, for server errors, the cause.
func logRequests(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		status := c.Writer.Status()
		attrs := []any{
			"request_id", c.GetString("request_id"),
			"method", c.Request.Method,
			"path", c.Request.URL.Path,
			"status", status,
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000,
			"bytes", c.Writer.Size(),
		}
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
			for _, e := range c.Errors {
				attrs = append(attrs, "error", e.Err.Error())
			}
		}
		log.Log(c.Request.Context(), level, "request", attrs...)
	}
}

// recoverPanics turns a handler panic into a logged 500 with the error body.
func recoverPanics(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				log.Error("panic", "request_id", c.GetString("request_id"), "panic", r)
				writeError(c, errors.New("panic in handler"))
			}
		}()
		c.Next()
	}
}

var errBodyTooLarge = errors.New("request body too large")

// limitBody caps the body at limit bytes, as sent and, for gzip bodies
// (Content-Encoding: gzip), once more after decompression, so a small
// compressed bomb cannot expand without bound. A body whose declared
// length is already too large is refused before it is read.
func limitBody(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			writeError(c, errBodyTooLarge)
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		if strings.EqualFold(strings.TrimSpace(c.GetHeader("Content-Encoding")), "gzip") {
			zr, err := gzip.NewReader(c.Request.Body)
			if err != nil {
				writeError(c, Invalid("", "The body is not valid gzip."))
				return
			}
			c.Request.Body = &limitedReadCloser{r: zr, closer: c.Request.Body, left: limit}
			c.Request.Header.Del("Content-Encoding")
			c.Request.ContentLength = -1
		}
		c.Next()
	}
}

type limitedReadCloser struct {
	r      io.Reader
	closer io.Closer
	left   int64
}

func (l *limitedReadCloser) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more tells a body of exactly the limit from a larger one.
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			return 0, errBodyTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limitedReadCloser) Close() error { return l.closer.Close() }

// stripTrailingSlash serves /x/ and /x alike, without a redirect: PostHog
// clients call paths with the slash, others without.
func stripTrailingSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r.URL.Path = strings.TrimRight(p, "/")
			if r.URL.Path == "" {
				r.URL.Path = "/"
			}
			if r.URL.RawPath != "" {
				r.URL.RawPath = strings.TrimRight(r.URL.RawPath, "/")
			}
		}
		next.ServeHTTP(w, r)
	})
}
