package httpx

import (
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

const requestIDHeader = "X-Request-Id"

var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// RequestID keeps a well-formed client X-Request-Id or makes one, and
// echoes it in the response.
func RequestID() gin.HandlerFunc {
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

// LogRequests writes one JSON line per request: id, method, path, status,
// duration and, for server errors, the cause.
func LogRequests(log *slog.Logger) gin.HandlerFunc {
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

// RecoverPanics turns a handler panic into a logged 500 with the error body.
func RecoverPanics(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				log.Error("panic", "request_id", c.GetString("request_id"), "panic", r)
				WriteError(c, errors.New("panic in handler"))
			}
		}()
		c.Next()
	}
}

var ErrBodyTooLarge = errors.New("request body too large")

// LimitBody caps the body at limit bytes, as sent and, for gzip bodies
// (Content-Encoding: gzip), once more after decompression, so a small
// compressed bomb cannot expand without bound. A body whose declared
// length is already too large is refused before it is read. A body that
// cannot be read whole (truncated, or gzip that does not decompress) is
// the client's fault: a 400 on every route, whichever handler reads it.
func LimitBody(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			WriteError(c, ErrBodyTooLarge)
			return
		}
		body := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		c.Request.Body = &bodyReader{r: body, closer: body, left: -1}
		if strings.EqualFold(strings.TrimSpace(c.GetHeader("Content-Encoding")), "gzip") {
			zr, err := gzip.NewReader(body)
			if err != nil {
				if isTooLarge(err) || errors.Is(err, ErrBodyTimeout) {
					WriteError(c, err)
					return
				}
				WriteError(c, badGzip)
				return
			}
			c.Request.Body = &bodyReader{r: zr, closer: body, left: limit, gzip: true}
			c.Request.Header.Del("Content-Encoding")
			c.Request.ContentLength = -1
		}
		c.Next()
	}
}

var (
	badGzip   = Invalid("", "The body is not valid gzip (Content-Encoding: gzip): it is truncated or corrupt.")
	cutShort  = Invalid("", "The body could not be read in full: it ended before its declared length.")
	badChunks = Invalid("", "The body's chunked transfer encoding is malformed.")
)

func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe) || errors.Is(err, ErrBodyTooLarge)
}

// bodyReader is a request body that answers read failures as the
// client's errors: a body over the limit stays a 413, a truncated or
// corrupt one becomes a 400. left, when not negative, bounds what a
// decompressed body may expand to.
type bodyReader struct {
	r      io.Reader
	closer io.Closer
	left   int64
	gzip   bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.left == 0 {
		// One byte more tells a body of exactly the limit from a larger one.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, ErrBodyTooLarge
		}
		return 0, io.EOF
	}
	if b.left > 0 && int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	var ne net.Error
	switch {
	case err == nil, err == io.EOF, isTooLarge(err), errors.Is(err, ErrBodyTimeout):
		return n, err
	case errors.As(err, &ne):
		return n, bodyFailed(err)
	case b.gzip:
		return n, badGzip
	case errors.Is(err, io.ErrUnexpectedEOF):
		return n, cutShort
	case strings.Contains(err.Error(), "chunk"):
		// net/http's chunked reader fails with unexported errors
		// ("invalid byte in chunk length", "malformed chunked
		// encoding"): the client's malformed request, not a hang-up.
		return n, badChunks
	}
	return n, bodyFailed(err)
}

// bodyFailed is a body whose connection failed while it was sent (reset,
// or closed by the client): the client's doing, a 499 like a client that
// hangs up, not an outage of the stores (an untyped network error would
// read as PostgreSQL's) nor a server error.
func bodyFailed(err error) error {
	return &Error{Kind: KindCanceled, Code: "body_read_failed", Err: err,
		Detail: "The connection failed while the body was being sent: send it again."}
}

func (b *bodyReader) Close() error { return b.closer.Close() }

// StripTrailingSlash serves /x/ and /x alike, without a redirect: PostHog
// clients call paths with the slash, others without. The path as sent is
// kept (SentPath) for links back to it.
func StripTrailingSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r = r.WithContext(context.WithValue(r.Context(), sentPathKey{}, p))
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

type sentPathKey struct{}

// SentPath is the request's path as the client sent it, trailing slash
// included.
func SentPath(r *http.Request) string {
	if p, ok := r.Context().Value(sentPathKey{}).(string); ok {
		return p
	}
	return r.URL.Path
}
