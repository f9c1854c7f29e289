package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
)

// capturePaths are where PostHog's SDKs send events. They authenticate by
// the project's api_token, not a personal key.
var capturePaths = []string{"/batch", "/capture", "/e", "/i/v0/e"}

func (s *Service) captureRoutes(r *gin.Engine) {
	for _, p := range capturePaths {
		r.POST(p, s.capture)
	}
}

// CORS lets browsers (posthog-js runs on the customer's site)
// call everything outside the personal-key API: capture, flags, remote
// config, and the errors and 404s of those paths, which a browser would
// otherwise report as a CORS failure instead of the answer. It runs
// before every other middleware, so an early 400 or 413 carries the
// headers too, and answers preflights itself.
func CORS(c *gin.Context) {
	p := c.Request.URL.Path
	if p == "/api" || strings.HasPrefix(p, "/api/") || p == "/_health" || p == "/_ready" {
		c.Next()
		return
	}
	h := c.Writer.Header()
	if origin := c.GetHeader("Origin"); origin != "" {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Add("Vary", "Origin")
	} else {
		h.Set("Access-Control-Allow-Origin", "*")
	}
	if c.Request.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		if req := c.GetHeader("Access-Control-Request-Headers"); req != "" {
			h.Set("Access-Control-Allow-Headers", req)
		} else {
			h.Set("Access-Control-Allow-Headers", "X-Requested-With, Content-Type")
		}
		h.Set("Access-Control-Max-Age", "3600")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

// capture stores a request's events and answers once they are stored.
func (s *Service) capture(c *gin.Context) {
	now := time.Now().UTC()
	body, err := captureBody(c, s.cfg.BodyLimit)
	if err != nil {
		s.countCaptureError(err, 1)
		httpx.WriteError(c, err)
		return
	}
	p, err := parsePayload(body, now, querySentAt(c.Query("_")))
	if err != nil {
		if s.cfg.Metrics != nil {
			s.countCaptureError(err, payloadEvents(body))
		}
		httpx.WriteError(c, err)
		return
	}
	token := p.token
	if token == "" {
		token = c.Query("token")
	}
	ctx := c.Request.Context()
	proj, err := s.tokenProject(ctx, token)
	if err != nil {
		s.countCaptureError(err, len(p.events))
		httpx.WriteError(c, err)
		return
	}
	ip := ""
	var geo *geoLocator
	if !proj.AnonymizeIPs {
		ip = c.ClientIP()
		if s.cfg.GeoIP != nil {
			geo = &geoLocator{g: s.cfg.GeoIP, persons: s.cfg.GeoIPPersons, requestIP: ip}
		}
	}
	for i := range p.events {
		p.events[i].TeamID = proj.ID
		if geo != nil {
			geo.enrich(&p.events[i], p.geo[i])
		}
		if ip != "" {
			p.events[i].Properties = withIP(p.events[i].Properties, ip)
		} else {
			p.events[i].Properties = withoutIP(p.events[i].Properties)
		}
	}
	if err := s.captureGroups(ctx, proj.ID, p); err != nil {
		s.countCaptureError(err, len(p.events))
		httpx.WriteError(c, err)
		return
	}
	res := s.writer.Write(ctx, p.events)
	if res.Err != nil {
		s.countCaptureError(storeError(res.Err), len(p.events))
		httpx.WriteError(c, storeError(res.Err))
		return
	}
	s.cfg.Metrics.IngestEvents(metrics.IngestAccepted, res.Stored)
	s.cfg.Metrics.IngestEvents(metrics.IngestDeduplicated, res.Duplicates)
	s.changes.Note(proj.ID) // cached results of open ranges are now stale
	if !proj.IngestedEvent {
		if _, done := s.ingested.Load(proj.ID); !done {
			if err := s.store.MarkIngested(ctx, proj.ID, token); err != nil {
				// The events are stored; the flag is set by the next request.
				s.log.Warn("could not mark the project as having events", "project_id", proj.ID, "error", err)
			} else {
				s.ingested.Store(proj.ID, true)
			}
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": 1})
}

// countCaptureError counts n events refused with err: rejected when the
// client is at fault (a 4xx), failed when the server is.
func (s *Service) countCaptureError(err error, n int) {
	if s.cfg.Metrics == nil {
		return
	}
	outcome := metrics.IngestFailed
	if httpx.ToError(err).Kind.Status() < http.StatusInternalServerError {
		outcome = metrics.IngestRejected
	}
	s.cfg.Metrics.IngestEvents(outcome, n)
}

// payloadEvents is how many events a refused body held, for the
// rejected count: a body that cannot be read as events counts as one.
func payloadEvents(body []byte) int {
	_, wes, single, err := decodePayload(CleanJSONText(bytes.TrimSpace(body)))
	if err != nil || single || len(wes) == 0 {
		return 1
	}
	return len(wes)
}

// tokenProject finds the project a capture-side request's token opens:
// 401 when there is none, or it is malformed or unknown.
func (s *Service) tokenProject(ctx context.Context, token string) (metadata.TokenProject, error) {
	if token == "" {
		return metadata.TokenProject{}, &httpx.Error{Kind: httpx.KindUnauthenticated, Code: "missing_api_key",
			Detail: "No project API key: send it as api_key in the body or as the token query parameter."}
	}
	invalid := &httpx.Error{Kind: httpx.KindUnauthenticated, Code: "invalid_api_key",
		Detail: "Project API key invalid. You can find your project API key in the project's settings."}
	if !plausibleToken(token) {
		return metadata.TokenProject{}, invalid
	}
	proj, err := s.store.ProjectForToken(ctx, token)
	if errors.Is(err, metadata.ErrNotFound) {
		return proj, invalid
	}
	return proj, err
}

// maxTokenLength is far beyond any token insightd makes (47 characters).
const maxTokenLength = 200

// plausibleToken refuses what no project token can be before it reaches
// PostgreSQL, which fails on a NUL rather than finding nothing: control
// characters, bytes that are not UTF-8, overlong text.
func plausibleToken(t string) bool {
	if len(t) > maxTokenLength || !utf8.ValidString(t) {
		return false
	}
	for _, r := range t {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// withIP adds the sender's address as $ip, as PostHog does unless the
// project anonymizes IPs; an $ip the client sent is kept. The key is
// spliced into the object's text, which capture has already checked is a
// JSON object, rather than decoding and encoding every event.
func withIP(props, ip string) string {
	if strings.Contains(props, `"$ip"`) || !strings.HasPrefix(props, "{") {
		return props
	}
	q, _ := json.Marshal(ip)
	body := strings.TrimSpace(props[1:])
	if body == "}" {
		return `{"$ip":` + string(q) + `}`
	}
	return `{"$ip":` + string(q) + `,` + body
}

// withoutIP drops a $ip the client sent itself (server SDKs forward the
// end user's): a project with anonymize_ips stores none, as PostHog's
// ingestion drops it.
func withoutIP(props string) string {
	if !strings.Contains(props, `ip"`) { // "$ip", or spelled with escapes
		return props
	}
	m := map[string]json.RawMessage{}
	if json.Unmarshal([]byte(props), &m) != nil {
		return props
	}
	if _, ok := m["$ip"]; !ok {
		return props
	}
	delete(m, "$ip")
	b, err := json.Marshal(m)
	if err != nil {
		return props
	}
	return string(b)
}

// storeError tells the client its events were not stored and that sending
// them again is safe.
func storeError(err error) error {
	if errors.Is(err, olap.ErrWriterClosed) {
		return &httpx.Error{Kind: httpx.KindUnavailable, Code: "shutting_down", Err: err,
			Detail: "The server is shutting down; the events were not stored. Send them again."}
	}
	if e := httpx.ToError(err); e.Kind == httpx.KindCanceled {
		return e
	}
	return &httpx.Error{Kind: httpx.KindUnavailable, Code: "ingestion_unavailable", Err: err,
		Detail: "The events could not be stored; send them again (events with a uuid are never stored twice)."}
}

// querySentAt reads posthog-js's "_" query parameter, the milliseconds
// since the epoch when it sent the request: PostHog's capture corrects
// the clock skew of events by it when the body says nothing of when it
// was sent. Anything else there (a plain cache buster) is not a time and
// is ignored.
func querySentAt(v string) *time.Time {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	t := time.UnixMilli(ms).UTC()
	if t.Before(minSentAt) || t.After(maxSentAt) {
		return nil
	}
	return &t
}

var minSentAt, maxSentAt = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
