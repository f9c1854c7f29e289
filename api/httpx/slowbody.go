package httpx

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"
)

// ErrBodyTimeout is a body that arrived slower than BodyDeadline allows:
// a 408, as PostHog's capture answers a body that stops coming. The
// request was not served, so sending it again is safe.
var ErrBodyTimeout = &Error{Kind: KindRequestTimeout, Code: "body_read_timeout",
	Detail: "The request body arrived too slowly: send it again (a body may take the server's body read timeout plus its size at the minimum rate)."}

// errorWriteTime bounds writing the 408 to a client that sends too slowly
// and may not read either: without it the answer would hold the
// connection as long as the client likes.
const errorWriteTime = 5 * time.Second

// BodyDeadline bounds how long a request's body may take to arrive,
// whatever its size and however the handler reads it: its first n bytes
// must have arrived within base + n/minRate (bytes a second) of the
// request's start, so a body of the whole limit may take base + limit /
// minRate and a slow but steady upload (a phone on a poor network) gets
// through, while a client trickling a byte every few seconds is cut off
// after base. The bound is the connection's read deadline, moved on as
// the body arrives and lifted once it is in, so that it never reaches
// the read with which the server watches for a client going away during
// a long analysis; it is set before the handler runs, so it also bounds
// the server's draining of a body the handler left unread (which comes
// before the answer is written). A body cut off answers 408
// (ErrBodyTimeout) and the connection closes. base <= 0 turns it off;
// so does a writer without a connection (tests' recorders).
func BodyDeadline(base time.Duration, minRate int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		r := c.Request
		if base <= 0 || minRate <= 0 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			c.Next()
			return
		}
		b := &deadlineBody{r: r.Body, w: c.Writer, rc: http.NewResponseController(c.Writer),
			start: time.Now(), base: base, rate: minRate, length: r.ContentLength}
		if b.arm() == nil {
			r.Body = b
		}
		c.Next()
	}
}

// deadlineBody is a request body under BodyDeadline.
type deadlineBody struct {
	r      io.ReadCloser
	w      http.ResponseWriter
	rc     *http.ResponseController
	start  time.Time
	base   time.Duration
	rate   int64
	length int64 // the declared length, -1 when chunked
	read   int64
	done   bool // the body is in: no deadline any more
	late   bool // the deadline passed: every read fails so
}

// arm sets the deadline of the next byte.
func (b *deadlineBody) arm() error {
	due := b.base + time.Duration(float64(b.read+1)/float64(b.rate)*float64(time.Second))
	return b.rc.SetReadDeadline(b.start.Add(due))
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if b.late {
		return 0, ErrBodyTimeout
	}
	if b.done {
		return b.r.Read(p)
	}
	_ = b.arm()
	n, err := b.r.Read(p)
	b.read += int64(n)
	switch {
	case err == io.EOF || b.length >= 0 && b.read >= b.length:
		// The last byte is taken (the server's body reports EOF with it).
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.late = true
		b.w.Header().Set("Connection", "close")
		_ = b.rc.SetWriteDeadline(time.Now().Add(errorWriteTime))
		return n, ErrBodyTimeout
	}
	return n, err
}

func (b *deadlineBody) Close() error { return b.r.Close() }
