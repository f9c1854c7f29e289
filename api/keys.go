package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
)

// keyJSON is a personal API key without its secret.
type keyJSON struct {
	ID                  int64       `json:"id"`
	Label               string      `json:"label"`
	MaskValue           string      `json:"mask_value"`
	CreatedAt           time.Time   `json:"created_at"`
	LastUsedAt          *time.Time  `json:"last_used_at"`
	LastRolledAt        *time.Time  `json:"last_rolled_at"`
	UserID              int64       `json:"user_id"`
	Scopes              []string    `json:"scopes"`
	ScopedOrganizations []uuid.UUID `json:"scoped_organizations"`
	ScopedTeams         []int64     `json:"scoped_teams"`
}

func (s *Server) currentKey(c *gin.Context) {
	k, err := s.store.Key(c.Request.Context(), principal(c).KeyID)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := keyJSON{ID: k.ID, Label: k.Label, MaskValue: k.MaskValue, CreatedAt: k.CreatedAt, UserID: k.UserID,
		Scopes: list(k.Scopes), ScopedOrganizations: k.Organizations, ScopedTeams: k.Teams}
	if k.LastUsedAt.Valid {
		out.LastUsedAt = &k.LastUsedAt.Time
	}
	if out.ScopedOrganizations == nil {
		out.ScopedOrganizations = []uuid.UUID{}
	}
	if out.ScopedTeams == nil {
		out.ScopedTeams = []int64{}
	}
	c.JSON(http.StatusOK, out)
}
