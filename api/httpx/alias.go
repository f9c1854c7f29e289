package httpx

import (
	"context"
	"net/http"
	"strings"
)

// Alias serves every path under From as the same path under To, before
// routing: one set of routes, scopes and handlers answers both, and a
// path under From that names no route is the same 404 as under To. From
// and To are whole path segments ("/api/environments", "/api/projects").
type Alias struct {
	From, To string
}

// Map is path under To when it is under From (From itself or From/...).
func (a Alias) Map(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, a.From)
	if !ok || (rest != "" && rest[0] != '/') {
		return path, false
	}
	return a.To + rest, true
}

// Handler rewrites the request's path for next. The path as sent stays
// the request's SentPath, so links back to it (a page's next) keep the
// prefix the client used. The caller's request is not changed.
func (a Alias) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mapped, ok := a.Map(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		sent := SentPath(r)
		r = r.WithContext(context.WithValue(r.Context(), sentPathKey{}, sent))
		u := *r.URL
		u.Path = mapped
		if raw, ok := a.Map(u.RawPath); ok {
			u.RawPath = raw
		} else {
			u.RawPath = "" // the prefix was escaped: Path alone says it
		}
		r.URL = &u
		next.ServeHTTP(w, r)
	})
}
