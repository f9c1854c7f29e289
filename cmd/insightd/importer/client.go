package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one PostHog-compatible API (PostHog Cloud, a
// self-hosted PostHog, or insightd) as one project with a personal key.
type Client struct {
	Base    string // scheme://host[:port], no trailing slash
	Key     string // personal API key (phx_...)
	Project int64
	HTTP    *http.Client
	// Retries is how many times a request the server refused for now
	// (429, 502, 503, 504, a broken connection) is sent again.
	Retries int
	// MaxWait bounds one wait, whatever Retry-After says.
	MaxWait time.Duration
	sleep   func(context.Context, time.Duration) error
}

// NewClient is a client of base for project with key.
func NewClient(base, key string, project int64) *Client {
	return &Client{Base: strings.TrimRight(base, "/"), Key: key, Project: project,
		HTTP: &http.Client{Timeout: 5 * time.Minute}, Retries: 8, MaxWait: 2 * time.Minute, sleep: sleepCtx}
}

// APIError is an answer other than 2xx: the request and what the server
// said, so that a failure names the source's (or target's) answer.
type APIError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *APIError) Error() string {
	body := e.Body
	if len(body) > 500 {
		body = body[:500] + "..."
	}
	return fmt.Sprintf("%s %s answered %d: %s", e.Method, e.Path, e.Status, strings.TrimSpace(body))
}

// IsStatus says whether err is an APIError with status code.
func IsStatus(err error, code int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == code
}

// projectPath is /api/projects/<id>/<rest>.
func (c *Client) projectPath(rest string) string {
	return fmt.Sprintf("/api/projects/%d/%s", c.Project, strings.TrimLeft(rest, "/"))
}

// Get reads path (relative to the base, or a full URL on the same host
// such as a list's next) into out.
func (c *Client) Get(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, nil, out, true)
}

// Post sends body; it is retried only on 429 (the server did nothing),
// or always when idempotent (a capture batch: events carry their uuid).
func (c *Client) Post(ctx context.Context, path string, body, out any, idempotent bool) error {
	return c.do(ctx, http.MethodPost, path, body, out, idempotent)
}

// Patch sends a partial update (idempotent).
func (c *Client) Patch(ctx context.Context, path string, body, out any) error {
	return c.do(ctx, http.MethodPatch, path, body, out, true)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any, idempotent bool) error {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		// A list's next link: keep its path and query, on our base (a
		// server behind a proxy may name its own host).
		u, err := url.Parse(path)
		if err != nil {
			return fmt.Errorf("next link %q: %w", path, err)
		}
		path = u.RequestURI()
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, c.Base+path, bytes.NewReader(payload))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.Key)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.HTTP.Do(req)
		var wait time.Duration
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !idempotent || attempt >= c.Retries {
				return fmt.Errorf("%s %s: %w", method, path, err)
			}
			wait = backoff(attempt)
		} else {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case rerr != nil && (!idempotent || attempt >= c.Retries):
				return fmt.Errorf("%s %s: reading the answer: %w", method, path, rerr)
			case rerr != nil:
				wait = backoff(attempt)
			case resp.StatusCode >= 200 && resp.StatusCode < 300:
				if out == nil || len(bytes.TrimSpace(b)) == 0 {
					return nil
				}
				if err := json.Unmarshal(b, out); err != nil {
					return fmt.Errorf("%s %s: the answer is not the JSON expected (%v): %.200s", method, path, err, b)
				}
				return nil
			default:
				ae := &APIError{Method: method, Path: path, Status: resp.StatusCode, Body: string(b)}
				retry := resp.StatusCode == http.StatusTooManyRequests ||
					(idempotent && (resp.StatusCode == 502 || resp.StatusCode == 503 || resp.StatusCode == 504))
				if !retry || attempt >= c.Retries {
					return ae
				}
				wait = retryAfter(resp.Header.Get("Retry-After"), attempt)
			}
		}
		if wait > c.MaxWait {
			wait = c.MaxWait
		}
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// retryAfter reads a Retry-After header (seconds or an HTTP date), else
// backs off exponentially.
func retryAfter(h string, attempt int) time.Duration {
	h = strings.TrimSpace(h)
	if n, err := strconv.ParseFloat(h, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
		return 0
	}
	return backoff(attempt)
}

func backoff(attempt int) time.Duration {
	return min(time.Duration(1<<min(attempt, 6))*250*time.Millisecond, 30*time.Second)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// page is PostHog's paginated list.
type page struct {
	Next    *string           `json:"next"`
	Results []json.RawMessage `json:"results"`
}

// List reads every page of a paginated list under the project (rest may
// carry a query string), calling fn with each object.
func (c *Client) List(ctx context.Context, rest string, fn func(json.RawMessage) error) error {
	next := c.projectPath(rest)
	for next != "" {
		var p page
		if err := c.Get(ctx, next, &p); err != nil {
			return err
		}
		for _, r := range p.Results {
			if err := fn(r); err != nil {
				return err
			}
		}
		next = ""
		if p.Next != nil && *p.Next != "" && len(p.Results) > 0 {
			next = *p.Next
		}
	}
	return nil
}

// HogQL runs a HogQLQuery with placeholder values and answers its rows.
func (c *Client) HogQL(ctx context.Context, query string, values map[string]any) ([][]json.RawMessage, error) {
	body := map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": query, "values": values}}
	var out struct {
		Results [][]json.RawMessage `json:"results"`
		Error   *string             `json:"error"`
	}
	if err := c.Post(ctx, c.projectPath("query/"), body, &out, true); err != nil {
		return nil, err
	}
	if out.Error != nil && *out.Error != "" {
		return nil, fmt.Errorf("HogQL query answered an error: %s", *out.Error)
	}
	return out.Results, nil
}
