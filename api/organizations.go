package api

import (
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
)

func (s *Server) organizationRoutes(api *gin.RouterGroup) {
	read := requireScope("organization:read")
	api.GET("/organizations", read, s.listOrganizations)
	// The parameter is organization_id because the project routes below
	// it name it so.
	api.GET("/organizations/:organization_id", read, s.getOrganization)
}

func (s *Server) listOrganizations(c *gin.Context) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p := principal(c)
	orgs, total, err := s.store.ListOrganizations(c.Request.Context(), p.User.ID, p.KeyScope, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]organizationJSON, len(orgs))
	for i := range orgs {
		out[i] = organizationObject(&orgs[i])
	}
	httpx.Paginated(c, total, limit, offset, out)
}

func (s *Server) getOrganization(c *gin.Context) {
	o, err := s.pathOrganization(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, organizationObject(o))
}

// pathOrganization loads the path's organization (a UUID or @current)
// for the caller; one they are not a member of is 404.
func (s *Server) pathOrganization(c *gin.Context) (*metadata.Organization, error) {
	p := principal(c)
	m, err := s.store.ResolveOrganization(c.Request.Context(), p.User.ID, p.KeyScope, organization(c))
	if err != nil {
		return nil, err
	}
	return s.store.GetOrganization(c.Request.Context(), p.User.ID, p.KeyScope, m.OrganizationID)
}

// organizationJSON is an organization in PostHog's shape. Billing,
// plugins and member management do not exist here: their fields carry
// the values of an organization that uses none of them.
type organizationJSON struct {
	organizationBasicJSON
	CreatedAt                 time.Time            `json:"created_at"`
	UpdatedAt                 time.Time            `json:"updated_at"`
	PluginsAccessLevel        int                  `json:"plugins_access_level"`
	Teams                     []projectSummaryJSON `json:"teams"`
	Projects                  []projectSummaryJSON `json:"projects"`
	AvailableProductFeatures  []string             `json:"available_product_features"`
	IsMemberJoinEmailEnabled  bool                 `json:"is_member_join_email_enabled"`
	Metadata                  map[string]any       `json:"metadata"`
	CustomerID                *string              `json:"customer_id"`
	Enforce2FA                *bool                `json:"enforce_2fa"`
	MemberCount               int                  `json:"member_count"`
	IsAIDataProcessingAllowed *bool                `json:"is_ai_data_processing_approved"`
}

// organizationBasicJSON is the short form @me lists.
type organizationBasicJSON struct {
	ID                           uuid.UUID `json:"id"`
	Name                         string    `json:"name"`
	Slug                         string    `json:"slug"`
	LogoMediaID                  *string   `json:"logo_media_id"`
	MembershipLevel              int       `json:"membership_level"`
	MembersCanUsePersonalAPIKeys bool      `json:"members_can_use_personal_api_keys"`
}

func organizationBasic(o *metadata.Organization) organizationBasicJSON {
	return organizationBasicJSON{ID: o.ID, Name: o.Name, Slug: slug(o.Name, o.ID), MembershipLevel: o.MembershipLevel,
		MembersCanUsePersonalAPIKeys: true}
}

func organizationObject(o *metadata.Organization) organizationJSON {
	projects := make([]projectSummaryJSON, len(o.Projects))
	for i := range o.Projects {
		projects[i] = projectSummary(&o.Projects[i])
	}
	return organizationJSON{
		organizationBasicJSON: organizationBasic(o),
		CreatedAt:             o.CreatedAt, UpdatedAt: o.UpdatedAt,
		// PostHog's level at which members may install any plugin; none exist.
		PluginsAccessLevel: 9,
		// A project is its own team here: both lists are the same.
		Teams: projects, Projects: projects,
		AvailableProductFeatures: []string{}, Metadata: map[string]any{}, MemberCount: o.MemberCount,
	}
}

// slug is a URL-friendly form of the name, made unique by the start of
// the organization's id: PostHog stores one, insightd derives it.
func slug(name string, id uuid.UUID) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	if b.Len() == 0 {
		return id.String()[:8]
	}
	return strings.TrimSuffix(b.String(), "-") + "-" + id.String()[:8]
}
