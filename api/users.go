package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
)

func (s *Server) userRoutes(api *gin.RouterGroup) {
	// Only the caller: users cannot see each other here.
	api.GET("/users/@me", requireScope("user:read"), s.me)
	// A key may always describe itself (its scopes, its limits): tools ask
	// before anything else which projects they may touch.
	api.GET("/personal_api_keys/@current", s.currentKey)
}

// meJSON is the caller as PostHog's /api/users/@me/ answers it: the user,
// their current organization and project, and every organization the
// key may touch.
type meJSON struct {
	userJSON
	DateJoined          time.Time               `json:"date_joined"`
	PendingEmail        *string                 `json:"pending_email"`
	HasPassword         bool                    `json:"has_password"`
	IsStaff             bool                    `json:"is_staff"`
	IsImpersonated      bool                    `json:"is_impersonated"`
	Is2FAEnabled        bool                    `json:"is_2fa_enabled"`
	HasSocialAuth       bool                    `json:"has_social_auth"`
	AnonymizeData       bool                    `json:"anonymize_data"`
	ToolbarMode         *string                 `json:"toolbar_mode"`
	ThemeMode           *string                 `json:"theme_mode"`
	NotificationSetting map[string]any          `json:"notification_settings"`
	EventsColumnConfig  map[string]any          `json:"events_column_config"`
	Team                *teamBasicJSON          `json:"team"`
	Organization        *organizationJSON       `json:"organization"`
	Organizations       []organizationBasicJSON `json:"organizations"`
}

// teamBasicJSON is the current project in @me: the reduced project and
// the id of the project it belongs to (itself, here).
type teamBasicJSON struct {
	projectSummaryJSON
	ProjectID int64 `json:"project_id"`
}

func (s *Server) me(c *gin.Context) {
	ctx := c.Request.Context()
	p := principal(c)
	orgs, _, err := s.store.ListOrganizations(ctx, p.User.ID, p.KeyScope, httpx.MaxLimit, 0)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := meJSON{userJSON: *userObject(&p.User), DateJoined: p.User.DateJoined,
		NotificationSetting: map[string]any{}, EventsColumnConfig: map[string]any{"active": "DEFAULT"},
		Organizations: make([]organizationBasicJSON, len(orgs))}
	for i := range orgs {
		out.Organizations[i] = organizationBasic(&orgs[i])
	}
	// The current organization is the one @current names, the oldest the
	// key may touch; its first project is the current one.
	m, err := s.store.ResolveOrganization(ctx, p.User.ID, p.KeyScope, "@current")
	if err != nil && !errors.Is(err, metadata.ErrNotFound) {
		httpx.WriteError(c, err)
		return
	}
	if err == nil {
		o, err := s.store.GetOrganization(ctx, p.User.ID, p.KeyScope, m.OrganizationID)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		org := organizationObject(o)
		out.Organization = &org
		if len(org.Projects) > 0 {
			out.Team = &teamBasicJSON{projectSummaryJSON: org.Projects[0], ProjectID: org.Projects[0].ID}
		}
	}
	c.JSON(http.StatusOK, out)
}
