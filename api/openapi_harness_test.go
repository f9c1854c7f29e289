package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// apiSpec is the parsed document and its router, built once per test
// binary: every request of the package's tests is checked against it.
type apiSpec struct {
	doc    *openapi3.T
	router routers.Router
}

var loadSpec = sync.OnceValues(func() (*apiSpec, error) {
	// kin-openapi decodes only the media types it knows; these responses
	// are text to compare as such.
	for _, ct := range []string{"application/javascript", "text/javascript", "text/html", "text/css"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	return &apiSpec{doc: doc, router: router}, nil
})

func mustSpec(t testing.TB) *apiSpec {
	t.Helper()
	s, err := loadSpec()
	if err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	return s
}

// validated wraps h so that every request it serves and every response it
// writes is checked against the OpenAPI document; a mismatch fails t with
// the operation, the path and the validator's message. Test probes
// (/test/...) are not part of the API and pass unchecked.
func validated(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	spec := mustSpec(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/test/") || r.Method == http.MethodOptions {
			h.ServeHTTP(w, r)
			return
		}
		// The body is copied as the server reads it (reading it first
		// would change when the server sees a client go away); what the
		// server left unread is read after it.
		var copied bytes.Buffer
		var tb *teeBody
		if r.Body != nil {
			tb = &teeBody{ReadCloser: r.Body, to: &copied}
			r.Body = tb
		}
		tee := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(tee, r)
		if tb != nil {
			if tb.err == nil && !tb.eof {
				_, _ = io.Copy(io.Discard, tb)
			}
			if tb.err != nil && tb.err != io.EOF {
				return // a body cut short: no request to check
			}
		}
		body := copied.Bytes()
		if msg := spec.check(r, body, tee); msg != "" {
			t.Errorf("openapi: %s", msg)
		}
	})
}

// check compares one exchange with the document. A request the document
// refuses must have been refused by the server too (4xx); the response must
// be one the operation documents, whatever the request was.
func (s *apiSpec) check(r *http.Request, body []byte, w *teeWriter) string {
	status := w.code()
	u := *r.URL
	if len(u.Path) > 1 {
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
	}
	if mapped, ok := environments.Map(u.Path); ok {
		// The document states the alias once rather than every path twice.
		u.Path, u.RawPath = mapped, ""
	}
	if rest, ok := strings.CutPrefix(u.Path, "/console/"); ok {
		// gin's catch-all {file} spans segments; OpenAPI's is one segment.
		u.RawPath = "/console/" + url.PathEscape(rest)
	}
	req := r.Clone(context.Background())
	req.URL = &u
	req.RequestURI = ""
	payload := requestPayload(r, body)
	req.Body = io.NopCloser(bytes.NewReader(payload))
	req.Header.Del("Content-Encoding")
	if len(bytes.TrimSpace(payload)) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json") // as the server reads it
	}
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return ""
		}
		return fmt.Sprintf("%s %s answered %d but the document has no such operation: %v", r.Method, u.Path, status, err)
	}
	op := route.Operation.OperationID
	if op == "" {
		op = r.Method + " " + route.Path
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
		SkipSettingDefaults: true,
		MultiError:          true,
	}
	if encodedCapture(r, payload) {
		// Compressed or encoded capture bodies have no schema to meet.
		opts.ExcludeRequestBody = true
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	if reqErr != nil && status < 400 {
		return fmt.Sprintf("%s (%s %s): the server answered %d to a request the document refuses: %v",
			op, r.Method, route.Path, status, reqErr)
	}
	respOpts := *opts
	respOpts.IncludeResponseStatus = true
	in.Options = &respOpts
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 w.Header(),
		Body:                   io.NopCloser(bytes.NewReader(w.buf.Bytes())),
		Options:                &respOpts,
	}
	if status == http.StatusNotModified || status == http.StatusNoContent {
		out.Body = io.NopCloser(bytes.NewReader(nil))
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Sprintf("%s (%s %s): response %d does not match the document: %v (body %.300s)",
			op, r.Method, route.Path, status, err, w.buf.String())
	}
	return ""
}

// requestPayload is the body as the document describes it: a gzip body
// decompressed (the server does the same before any handler reads it).
func requestPayload(r *http.Request, body []byte) []byte {
	if !strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		return body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return body
	}
	b, err := io.ReadAll(zr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return body
	}
	return b
}

// encodedCapture reports a capture or flags body in one of the SDKs'
// encodings (compression=..., a form body holding base64, a body that
// is not JSON): the document describes those routes' bodies as opaque.
func encodedCapture(r *http.Request, payload []byte) bool {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		return false
	}
	if r.URL.Query().Get("compression") != "" || !json.Valid(payload) {
		return true
	}
	ct := r.Header.Get("Content-Type")
	return ct != "" && !strings.HasPrefix(ct, "application/json")
}

// teeWriter passes a response through and keeps a copy to validate.
type teeWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	// A CSV export is streamed and must not be held whole (its memory is
	// what some tests measure): its text is not kept to validate.
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
		w.buf.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *teeWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// validatedServer is httptest.NewServer on the validated handler.
func validatedServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	return httptest.NewServer(validated(t, h))
}

// teeBody copies what is read of a request body, and keeps its first
// error other than the end.
type teeBody struct {
	io.ReadCloser
	to  *bytes.Buffer
	err error
	eof bool
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.to.Write(p[:n])
	if err == io.EOF {
		b.eof = true
	} else if err != nil && b.err == nil {
		b.err = err
	}
	return n, err
}
