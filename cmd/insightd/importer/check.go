package importer

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// project is what the importer reads of a project.
type project struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	APIToken string `json:"api_token"`
	Timezone string `json:"timezone"`
}

// keyInfo is PostHog's personal_api_keys/@current.
type keyInfo struct {
	Scopes      []string `json:"scopes"`
	ScopedTeams []int64  `json:"scoped_teams"`
}

// sourceScopes and targetScopes are the scopes each part needs of the
// source's key and the target's.
var sourceScopes = map[string][]string{
	"events": {"query:read"}, "persons": {"person:read"}, "groups": {"group:read", "query:read"},
	"actions": {"action:read"}, "cohorts": {"cohort:read", "person:read"}, "insights": {"insight:read"},
	"dashboards": {"dashboard:read"}, "annotations": {"annotation:read"},
}

var targetScopes = map[string][]string{
	"events": {}, "persons": {"person:read"}, "groups": {"group:read"},
	"actions": {"action:read", "action:write"}, "cohorts": {"cohort:read", "cohort:write"},
	"insights": {"insight:read", "insight:write"}, "dashboards": {"dashboard:read", "dashboard:write", "insight:write"},
	"annotations": {"annotation:read", "annotation:write"},
}

// check makes sure both ends are PostHog-compatible APIs that know their
// projects, and that each key has the scopes the parts asked for need,
// before anything is written.
func (im *Importer) check(ctx context.Context) error {
	for _, end := range []struct {
		name   string
		c      *Client
		scopes map[string][]string
	}{{"source", im.src, sourceScopes}, {"target", im.dst, targetScopes}} {
		if end.c == nil {
			continue // files instead of a source
		}
		var p project
		if err := end.c.Get(ctx, fmt.Sprintf("/api/projects/%d/", end.c.Project), &p); err != nil {
			if IsStatus(err, 401) || IsStatus(err, 403) {
				return fmt.Errorf("the %s key cannot read project %d at %s: %w", end.name, end.c.Project, end.c.Base, err)
			}
			return fmt.Errorf("the %s (%s) does not answer as a PostHog-compatible API for project %d: %w", end.name, end.c.Base, end.c.Project, err)
		}
		if p.ID != end.c.Project || p.APIToken == "" {
			return fmt.Errorf("the %s (%s) is not a PostHog-compatible API: its project %d answered without its id and api_token", end.name, end.c.Base, end.c.Project)
		}
		if end.name == "target" {
			im.token = p.APIToken
		}
		var k keyInfo
		if err := end.c.Get(ctx, "/api/personal_api_keys/@current/", &k); err != nil {
			return fmt.Errorf("the %s key cannot describe itself (personal_api_keys/@current), so its scopes cannot be checked: %w", end.name, err)
		}
		if len(k.ScopedTeams) > 0 && !slices.Contains(k.ScopedTeams, end.c.Project) {
			return fmt.Errorf("the %s key is limited to projects %v, not %d", end.name, k.ScopedTeams, end.c.Project)
		}
		var missing []string
		for _, part := range Parts {
			if !im.cfg.Only[part] {
				continue
			}
			for _, sc := range end.scopes[part] {
				if im.cfg.DryRun && end.name == "target" && strings.HasSuffix(sc, ":write") {
					continue
				}
				if !hasScope(k.Scopes, sc) && !slices.Contains(missing, sc) {
					missing = append(missing, sc)
				}
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the %s key lacks the scopes %s that the parts asked for need (it has %s)",
				end.name, strings.Join(missing, ", "), strings.Join(k.Scopes, ", "))
		}
	}
	return nil
}

// hasScope is PostHog's rule: "*" is every scope, and a write scope
// grants the read of the same object.
func hasScope(have []string, want string) bool {
	obj, _, _ := strings.Cut(want, ":")
	for _, h := range have {
		if h == "*" || h == want || h == obj+":write" {
			return true
		}
	}
	return false
}
