package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
)

const (
	principalKey = "principal"
	// organizationKey holds the path's organization as resolved for a key
	// limited to some organizations (see checkKeyLimits).
	organizationKey = "organization"
)

// authenticate finds the personal API key where PostHog clients put it:
// the Authorization: Bearer header, else the personal_api_key query
// parameter, else a personal_api_key field in a JSON body.
func (s *Server) authenticate(c *gin.Context) {
	key, err := apiKey(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if key == "" {
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindUnauthenticated, Code: "not_authenticated",
			Detail: "Authentication credentials were not provided: send Authorization: Bearer <personal API key>."})
		return
	}
	p, err := s.store.Authenticate(c.Request.Context(), key)
	if errors.Is(err, metadata.ErrNotFound) {
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindUnauthenticated, Code: "authentication_failed", Detail: "Personal API key is invalid."})
		return
	}
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.Set(principalKey, p)
	if err := s.checkKeyLimits(c, p); err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.Next()
}

// checkKeyLimits refuses, with 403 naming it, the organization or project
// a request's path names when the key is limited to others (PostHog's
// scoped_organizations and scoped_teams), for every route at once. What
// the user cannot reach at all stays a 404, as everywhere. Keys without
// limits, most of them, cost nothing here.
func (s *Server) checkKeyLimits(c *gin.Context, p *metadata.Principal) error {
	if !p.Limited() {
		return nil
	}
	ctx := c.Request.Context()
	var pathOrg *uuid.UUID
	if ref, ok := c.Params.Get("organization_id"); ok {
		m, err := s.store.ResolveOrganization(ctx, p.User.ID, p.KeyScope, ref)
		if err != nil {
			return err
		}
		if !p.AllowsOrganization(m.OrganizationID) {
			return keyLimited("organization", m.OrganizationID.String())
		}
		// @current means the oldest organization the key may touch; the
		// handlers read this instead of the path.
		c.Set(organizationKey, m.OrganizationID.String())
		pathOrg = &m.OrganizationID
		if len(p.Teams) > 0 && c.Request.Method == http.MethodPost && c.FullPath() == "/api/organizations/:organization_id/projects" {
			return &httpx.Error{Kind: httpx.KindForbidden, Code: "permission_denied",
				Detail: "API key limited to projects cannot create projects."}
		}
	}
	id, ok := pathProjectRef(c)
	if !ok {
		return nil
	}
	proj, err := s.store.ProjectForUser(ctx, p.User.ID, id)
	if err != nil {
		return err
	}
	if pathOrg != nil && proj.OrganizationID != *pathOrg {
		return nil // the handler answers 404: not a project of that organization
	}
	if !p.AllowsProject(proj.OrganizationID, proj.ID) {
		return keyLimited("project", strconv.FormatInt(proj.ID, 10))
	}
	return nil
}

// pathProjectRef is the project a route's path names, if any: the
// project_id of project routes, the id of the organization's project
// routes. A malformed id names nothing; the handler answers 404.
func pathProjectRef(c *gin.Context) (int64, bool) {
	v, ok := c.Params.Get("project_id")
	if !ok && strings.HasPrefix(c.FullPath(), "/api/organizations/:organization_id/projects/:id") {
		v, ok = c.Params.Get("id")
	}
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 64)
	return id, err == nil && id > 0
}

func keyLimited(what, id string) *httpx.Error {
	return &httpx.Error{Kind: httpx.KindForbidden, Code: "permission_denied",
		Detail: fmt.Sprintf("API key does not have access to the requested %s: ID %s.", what, id)}
}

func apiKey(c *gin.Context) (string, error) {
	if h := strings.TrimSpace(c.GetHeader("Authorization")); h != "" {
		scheme, key, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", &httpx.Error{Kind: httpx.KindUnauthenticated, Code: "authentication_failed",
				Detail: "The Authorization header must be: Bearer <personal API key>."}
		}
		return strings.TrimSpace(key), nil
	}
	if k := c.Query("personal_api_key"); k != "" {
		return k, nil
	}
	if c.Request.Body == nil || c.Request.Method == "GET" || c.Request.Method == "HEAD" {
		return "", nil
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return "", err
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return "", nil
	}
	var holder struct {
		Key string `json:"personal_api_key"`
	}
	_ = json.Unmarshal(body, &holder) // a body that is not JSON is the handler's to reject
	return holder.Key, nil
}

// requireScope answers 403 naming the scope when the key lacks it.
func requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !principal(c).HasScope(scope) {
			httpx.WriteError(c, &httpx.Error{Kind: httpx.KindForbidden, Code: "permission_denied",
				Detail: fmt.Sprintf("API key missing required scope '%s'", scope)})
			return
		}
		c.Next()
	}
}

func principal(c *gin.Context) *metadata.Principal {
	p, _ := c.MustGet(principalKey).(*metadata.Principal)
	return p
}
