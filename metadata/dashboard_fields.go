package metadata

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx/types"

	"github.com/insightd/insightd/querybuilder"
)

// Bounds on a dashboard: PostHog's column sizes (name 400, a text tile's
// body 4000), and enough tiles for any real dashboard per request.
const (
	dashboardNameMax        = 400
	dashboardDescriptionMax = 4000
	textTileMax             = 4000
	tileColorMax            = 400
	maxTilesPerRequest      = 200
)

// PostHog's restriction levels: anyone in the project can edit (21), or
// only those given edit rights (37).
const (
	RestrictionEveryoneCanEdit = 21
	RestrictionOnlyCollabs     = 37
)

// DashboardInput is a checked dashboard body: the columns to store, the
// tiles to add or change, and on create the dashboard to copy.
type DashboardInput struct {
	Values map[string]any
	// Tiles is nil when the body had no tiles.
	Tiles []TileInput
	// UseDashboard copies that dashboard's tiles and filters (create);
	// DuplicateTiles copies their insights too instead of sharing them.
	UseDashboard   *int64
	DuplicateTiles bool
}

// TileInput is one entry of a body's tiles: a change to tile ID, or
// (ID 0) a new tile showing InsightID or Text.
type TileInput struct {
	ID        int64
	InsightID int64
	Text      *string
	Layouts   types.JSONText // nil: unchanged
	Color     *string
	ColorSent bool
	Deleted   *bool
}

type dashboardField = field[Dashboard]

// ParseDashboardInput checks the writeable fields present in body; the
// first bad value is a ValidationError naming it. Ids the body names
// (use_dashboard, tiles' ids and insights) are checked by the store,
// against the project.
func ParseDashboardInput(body map[string]json.RawMessage) (DashboardInput, error) {
	values, err := parseFields(dashboardFields, body)
	in := DashboardInput{Values: values}
	if err != nil {
		return in, err
	}
	if raw, ok := body["tiles"]; ok && !isNull(raw) {
		tiles, problem := parseTiles(raw)
		if problem != "" {
			return in, &ValidationError{Attr: "tiles", Detail: problem}
		}
		in.Tiles = tiles
	}
	if raw, ok := body["use_dashboard"]; ok && !isNull(raw) {
		id, ok := positiveID(raw)
		if !ok {
			return in, &ValidationError{Attr: "use_dashboard", Detail: "Must be a dashboard id."}
		}
		in.UseDashboard = &id
	}
	if raw, ok := body["duplicate_tiles"]; ok && !isNull(raw) {
		b, problem := parseBool(raw)
		if problem != "" {
			return in, &ValidationError{Attr: "duplicate_tiles", Detail: problem}
		}
		in.DuplicateTiles = b.(bool)
	}
	return in, nil
}

var dashboardFields = []dashboardField{
	{name: "name", parse: trimmedText(dashboardNameMax, false), get: func(d *Dashboard) any { return d.Name }},
	{name: "description", parse: textOrEmpty(dashboardDescriptionMax), get: func(d *Dashboard) any { return d.Description }},
	{name: "pinned", parse: parseBool, get: func(d *Dashboard) any { return d.Pinned }},
	{name: "filters", parse: parseDashboardFilters, get: func(d *Dashboard) any { return d.Filters }},
	{name: "tags", parse: parseTags, get: func(d *Dashboard) any { return []string(d.Tags) }},
	{name: "deleted", parse: parseBool, get: func(d *Dashboard) any { return d.Deleted }},
	{name: "restriction_level", parse: func(raw json.RawMessage) (any, string) {
		var n int64
		if json.Unmarshal(raw, &n) != nil || (n != RestrictionEveryoneCanEdit && n != RestrictionOnlyCollabs) {
			return nil, fmt.Sprintf("Must be %d or %d.", RestrictionEveryoneCanEdit, RestrictionOnlyCollabs)
		}
		return n, ""
	}, get: func(d *Dashboard) any { return d.RestrictionLevel }},
}

// parseDashboardFilters reads the overrides a dashboard applies to its
// tiles: date_from and date_to (strings or null) and properties (a list
// of conditions or a group). Other keys are refused rather than stored
// and silently ignored.
func parseDashboardFilters(raw json.RawMessage) (any, string) {
	if isNull(raw) {
		return types.JSONText("{}"), ""
	}
	doc, v, problem := jsonObjectDocument(raw)
	if problem != "" {
		return nil, problem
	}
	for k, x := range v {
		switch k {
		case "date_from", "date_to":
			d, ok := x.(string)
			if !ok && x != nil {
				return nil, fmt.Sprintf("filters.%s must be a date string or null.", k)
			}
			if err := querybuilder.CheckDate(d, k == "date_from"); ok && d != "" && err != nil {
				return nil, fmt.Sprintf("filters.%s: %v.", k, err)
			}
		case "properties":
			switch p := x.(type) {
			case nil, []any:
			case map[string]any:
				if _, ok := p["values"].([]any); !ok || !isGroupType(p["type"]) {
					return nil, "filters.properties must be a list of property conditions or a group {type, values}."
				}
			default:
				return nil, "filters.properties must be a list of property conditions or a group {type, values}."
			}
		default:
			return nil, fmt.Sprintf("filters.%s is not a dashboard filter (date_from, date_to, properties).", k)
		}
	}
	return doc, ""
}

func isGroupType(v any) bool {
	s, _ := v.(string)
	return strings.EqualFold(s, "AND") || strings.EqualFold(s, "OR")
}

// parseTiles reads a body's tiles: each an object with an id (a change)
// or without one (a new tile: an insight or a text).
func parseTiles(raw json.RawMessage) ([]TileInput, string) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, "Must be a list of tiles."
	}
	if len(items) > maxTilesPerRequest {
		return nil, fmt.Sprintf("At most %d tiles per request.", maxTilesPerRequest)
	}
	out := make([]TileInput, len(items))
	for i, it := range items {
		var f map[string]json.RawMessage
		if json.Unmarshal(it, &f) != nil || f == nil {
			return nil, fmt.Sprintf("tiles[%d] must be an object.", i)
		}
		t := &out[i]
		if v, ok := f["id"]; ok && !isNull(v) {
			id, ok := positiveID(v)
			if !ok {
				return nil, fmt.Sprintf("tiles[%d].id must be a tile id.", i)
			}
			t.ID = id
		}
		if v, ok := f["insight"]; ok && !isNull(v) {
			id, ok := positiveID(v)
			if !ok {
				var obj struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(v, &obj) == nil && obj.ID != nil {
					id, ok = positiveID(obj.ID)
				}
			}
			if !ok {
				return nil, fmt.Sprintf("tiles[%d].insight must be an insight id or an object with one.", i)
			}
			t.InsightID = id
		}
		if v, ok := f["text"]; ok && !isNull(v) {
			var obj map[string]json.RawMessage
			var body string
			if json.Unmarshal(v, &obj) != nil || obj == nil || json.Unmarshal(obj["body"], &body) != nil {
				return nil, fmt.Sprintf("tiles[%d].text must be an object with a body string.", i)
			}
			if problem := checkText(body, textTileMax); problem != "" {
				return nil, fmt.Sprintf("tiles[%d].text.body: %s", i, problem)
			}
			t.Text = &body
		}
		if v, ok := f["layouts"]; ok {
			if isNull(v) {
				t.Layouts = types.JSONText("{}")
			} else {
				doc, _, problem := jsonObjectDocument(v)
				if problem != "" {
					return nil, fmt.Sprintf("tiles[%d].layouts: %s", i, problem)
				}
				t.Layouts = doc
			}
		}
		if v, ok := f["color"]; ok {
			t.ColorSent = true
			if !isNull(v) {
				var s string
				if json.Unmarshal(v, &s) != nil {
					return nil, fmt.Sprintf("tiles[%d].color must be a string or null.", i)
				}
				if problem := checkText(s, tileColorMax); problem != "" {
					return nil, fmt.Sprintf("tiles[%d].color: %s", i, problem)
				}
				t.Color = &s
			}
		}
		if v, ok := f["deleted"]; ok {
			b, problem := parseBool(v)
			if problem != "" {
				return nil, fmt.Sprintf("tiles[%d].deleted: %s", i, problem)
			}
			d := b.(bool)
			t.Deleted = &d
		}
		switch {
		case t.ID == 0 && t.InsightID == 0 && t.Text == nil:
			return nil, fmt.Sprintf("tiles[%d] needs an id, an insight or a text.", i)
		case t.ID == 0 && t.InsightID != 0 && t.Text != nil:
			return nil, fmt.Sprintf("tiles[%d] shows an insight or a text, not both.", i)
		}
	}
	return out, ""
}

// positiveID reads a positive integer id.
func positiveID(raw json.RawMessage) (int64, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil && id > 0
}
