// Package taxonomy answers what a project's events and properties are
// (analytics.md, "Taxonomy"): event_definitions/, property_definitions/
// and the read_taxonomy tool, read from the small tables the event writer
// keeps (olap/taxonomy.go; their SQL in querybuilder/taxonomy.go), never
// from a scan of the events.
package taxonomy

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// Engine runs a statement for a project (the analysis service's Query:
// its limits, its metrics).
type Engine interface {
	Query(ctx context.Context, projectID int64, st querybuilder.Statement) (*olap.Rows, error)
}

// Service reads the taxonomy.
type Service struct {
	schema querybuilder.Schema
	engine Engine
	store  *metadata.Store
}

// New builds the service; store answers the project's group types.
func New(schema querybuilder.Schema, engine Engine, store *metadata.Store) *Service {
	return &Service{schema: schema, engine: engine, store: store}
}

// definitionSpace makes the definitions' ids: a name-based uuid of the
// project, kind and name, the same on every server and after a restart.
var definitionSpace = uuid.MustParse("4f1b6f0e-3c55-4d59-9a51-7d1f0c0c7a10")

func definitionID(team int64, kind string, gti int, name string) string {
	return uuid.NewSHA1(definitionSpace, []byte(fmt.Sprintf("%d\x00%s\x00%d\x00%s", team, kind, gti, name))).String()
}

// EventDefinition is one event_definitions/ item, as PostHog's serializer
// writes it.
type EventDefinition struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	CreatedAt        time.Time `json:"created_at"`
	LastSeenAt       time.Time `json:"last_seen_at"`
	LastUpdatedAt    time.Time `json:"last_updated_at"`
	Volume30Day      uint64    `json:"volume_30_day"`
	QueryUsage30Day  *int      `json:"query_usage_30_day"`
	Tags             []string  `json:"tags"`
	Description      *string   `json:"description"`
	IsAction         bool      `json:"is_action"`
	Verified         bool      `json:"verified"`
	Hidden           bool      `json:"hidden"`
	Owner            *int      `json:"owner"`
	PostToSlack      bool      `json:"post_to_slack"`
	IsCalculating    bool      `json:"is_calculating"`
	LastCalculatedAt *string   `json:"last_calculated_at"`
}

// PropertyDefinition is one property_definitions/ item.
type PropertyDefinition struct {
	ID                     string   `json:"id"`
	Name                   string   `json:"name"`
	PropertyType           *string  `json:"property_type"`
	IsNumerical            bool     `json:"is_numerical"`
	Type                   string   `json:"type"`
	GroupTypeIndex         *int     `json:"group_type_index"`
	IsSeenOnFilteredEvents *bool    `json:"is_seen_on_filtered_events"`
	Tags                   []string `json:"tags"`
	Description            *string  `json:"description"`
	Verified               bool     `json:"verified"`
	Hidden                 bool     `json:"hidden"`
	Example                *string  `json:"example"`
	VerifiedAt             *string  `json:"verified_at"`
	UpdatedAt              *string  `json:"updated_at"`
	PropertyTypeFormat     *string  `json:"property_type_format"`
}

// Events answers one page of event definitions and how many there are.
func (s *Service) Events(ctx context.Context, projectID int64, q querybuilder.EventDefinitionsQuery) ([]EventDefinition, int, error) {
	rows, err := s.engine.Query(ctx, projectID, querybuilder.BuildEventDefinitions(s.schema, projectID, q, time.Now().UTC()))
	if err != nil {
		return nil, 0, err
	}
	out := make([]EventDefinition, 0, len(rows.Data))
	total := 0
	for _, r := range rows.Data {
		d := EventDefinition{Tags: []string{}}
		d.Name, _ = r[0].(string)
		d.CreatedAt, _ = r[1].(time.Time)
		d.LastSeenAt, _ = r[2].(time.Time)
		d.LastUpdatedAt = d.LastSeenAt
		d.Volume30Day, _ = r[3].(uint64)
		total = cellInt(r[4])
		d.ID = definitionID(projectID, "event", 0, d.Name)
		out = append(out, d)
	}
	return out, total, nil
}

// Event answers the event definition with this id, or a 404.
func (s *Service) Event(ctx context.Context, projectID int64, id string) (*EventDefinition, error) {
	defs, _, err := s.Events(ctx, projectID, querybuilder.EventDefinitionsQuery{Limit: 1 << 30, Order: "name"})
	if err != nil {
		return nil, err
	}
	if d := byID(defs, id, func(d EventDefinition) string { return d.ID }); d != nil {
		return d, nil
	}
	return nil, &httpx.Error{Kind: httpx.KindNotFound, Code: "not_found", Detail: "No event definition has this id."}
}

// Properties answers one page of property definitions of one kind and
// how many there are.
func (s *Service) Properties(ctx context.Context, projectID int64, q querybuilder.PropertyDefinitionsQuery) ([]PropertyDefinition, int, error) {
	rows, err := s.engine.Query(ctx, projectID, querybuilder.BuildPropertyDefinitions(s.schema, projectID, q))
	if err != nil {
		return nil, 0, err
	}
	out := make([]PropertyDefinition, 0, len(rows.Data))
	total := 0
	for _, r := range rows.Data {
		d := PropertyDefinition{Tags: []string{}, Type: q.Type}
		d.Name, _ = r[0].(string)
		if t, _ := r[1].(string); t != "" {
			d.PropertyType = &t
			d.IsNumerical = t == "Numeric"
		}
		if q.EventNames != nil {
			seen := cellInt(r[2]) == 1 || r[2] == true
			d.IsSeenOnFilteredEvents = &seen
		}
		gti := 0
		if q.Kind == 3 {
			gti = q.GroupTypeIndex
			d.GroupTypeIndex = &gti
		}
		total = cellInt(r[3])
		d.ID = definitionID(projectID, q.Type, gti, d.Name)
		out = append(out, d)
	}
	return out, total, nil
}

// Property answers the property definition with this id, of any kind,
// or a 404.
func (s *Service) Property(ctx context.Context, projectID int64, id string) (*PropertyDefinition, error) {
	kinds := []querybuilder.PropertyDefinitionsQuery{{Kind: 1, Type: "event"}, {Kind: 2, Type: "person"}}
	for g := 0; g <= 4; g++ {
		kinds = append(kinds, querybuilder.PropertyDefinitionsQuery{Kind: 3, Type: "group", GroupTypeIndex: g})
	}
	for _, q := range kinds {
		q.Limit = 1 << 30
		defs, _, err := s.Properties(ctx, projectID, q)
		if err != nil {
			return nil, err
		}
		if d := byID(defs, id, func(d PropertyDefinition) string { return d.ID }); d != nil {
			return d, nil
		}
	}
	return nil, &httpx.Error{Kind: httpx.KindNotFound, Code: "not_found", Detail: "No property definition has this id."}
}

// byID is the definition with this id among defs, or nil.
func byID[T any](defs []T, id string, idOf func(T) string) *T {
	for i := range defs {
		if idOf(defs[i]) == id {
			return &defs[i]
		}
	}
	return nil
}

func cellInt(v any) int {
	switch n := v.(type) {
	case uint64:
		return int(n)
	case int64:
		return int(n)
	}
	return 0
}
