package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// The backend tools PostHog's CLI and MCP server call (POST
// /api/environments/:id/mcp_tools/<tool>/ {"args": {...}}), answered as
// PostHog's are: {"success", "content" (text for the model), and
// "structured_content"}. insightd has execute_sql and read_taxonomy;
// every other tool, and the products insightd does not have, answer a
// 404 naming what is missing (README, "What insightd does not serve").
func (s *Server) mcpToolRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id")
	g.POST("/mcp_tools/execute_sql", requireScope("query:read"), s.executeSQLTool)
	g.POST("/mcp_tools/read_taxonomy", requireScope("event_definition:read"), s.readTaxonomyTool)
}

// notFound answers a path no route serves: a 404 naming the product or
// MCP tool insightd lacks when the path is one of theirs, else the plain
// 404 (the router's NoRoute).
func notFound(c *gin.Context) {
	parts := strings.Split(strings.Trim(c.Request.URL.Path, "/"), "/")
	if len(parts) >= 4 && parts[0] == "api" && parts[1] == "projects" {
		if parts[3] == "mcp_tools" && len(parts) >= 5 {
			httpx.WriteError(c, &httpx.Error{Kind: httpx.KindNotFound, Code: "not_found",
				Detail: fmt.Sprintf("insightd has no MCP tool %q: it serves execute_sql and read_taxonomy.", parts[4])})
			return
		}
		if product, ok := missingProducts[parts[3]]; ok {
			httpx.WriteError(c, &httpx.Error{Kind: httpx.KindNotFound, Code: "not_found",
				Detail: product + " are not part of insightd, which serves product analytics only (see its README)."})
			return
		}
	}
	httpx.WriteError(c, httpx.NotFound())
}

// missingProducts are PostHog's products insightd does not have, by the
// project path their API lives under.
var missingProducts = map[string]string{
	"feature_flags":         "Feature flags",
	"experiments":           "Experiments",
	"experiment_holdouts":   "Experiment holdouts",
	"surveys":               "Surveys",
	"error_tracking":        "Error tracking",
	"max_tools":             "PostHog AI tools",
	"conversations":         "PostHog AI conversations",
	"session_recordings":    "Session recordings",
	"hog_functions":         "Data pipelines (hog functions)",
	"warehouse_tables":      "Data warehouse tables",
	"external_data_sources": "Data warehouse sources",
	"llm_analytics":         "LLM analytics",
}

func mcpArgs(c *gin.Context, into any) bool {
	body, err := httpx.JSONObject(c)
	if err != nil {
		httpx.WriteError(c, err)
		return false
	}
	args := body["args"]
	if len(args) == 0 || args[0] != '{' {
		httpx.WriteError(c, httpx.Invalid("args", "args must be an object holding the tool's input."))
		return false
	}
	if err := json.Unmarshal(args, into); err != nil {
		httpx.WriteError(c, httpx.Invalid("args", "args does not match the tool's input: "+err.Error()))
		return false
	}
	return true
}

// executeSQLTool runs HogQL as POST query/ runs a HogQLQuery; content is
// the result as a table of lines (columns separated by |).
func (s *Server) executeSQLTool(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	var args struct {
		Query        *string `json:"query"`
		Truncate     *bool   `json:"truncate"`
		ConnectionID *string `json:"connectionId"`
		SendRawQuery *bool   `json:"sendRawQuery"`
	}
	if !mcpArgs(c, &args) {
		return
	}
	switch {
	case args.Query == nil || strings.TrimSpace(*args.Query) == "":
		httpx.WriteError(c, httpx.Invalid("args.query", "query must be the HogQL to run."))
		return
	case args.ConnectionID != nil:
		httpx.WriteError(c, httpx.Invalid("args.connectionId", "insightd has no data warehouse connections: leave connectionId out."))
		return
	case args.SendRawQuery != nil && *args.SendRawQuery:
		httpx.WriteError(c, httpx.Invalid("args.sendRawQuery", "insightd has no data warehouse connections to send a raw query to."))
		return
	}
	node, _ := json.Marshal(map[string]any{"kind": "HogQLQuery", "query": *args.Query})
	st, text, _, err := s.compileHogQL(c.Request.Context(), p, node, "args")
	if err != nil {
		httpx.WriteError(c, renameAttr(err))
		return
	}
	env, err := s.hogqlResult(c.Request.Context(), p, st, nil, text, "args.query", "")
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	truncate := args.Truncate == nil || *args.Truncate
	c.JSON(http.StatusOK, gin.H{"success": true, "content": sqlTable(env, truncate),
		"structured_content": gin.H{"columns": env.Columns, "types": env.Types, "hasMore": env.HasMore, "limit": env.Limit}})
}

// renameAttr names the tool's field in a HogQL refusal: the compiler's
// args.query (the node's query) stays, anything else is the query too.
func renameAttr(err error) error {
	var he *httpx.Error
	if e, ok := err.(*httpx.Error); ok {
		he = e
	}
	if he != nil && !strings.HasPrefix(he.Attr, "args.query") {
		he.Attr = "args.query"
	}
	return err
}

// sqlTable writes rows as lines of values separated by |, the header
// first; with truncate, values past 1000 characters are cut.
func sqlTable(env *hogqlEnvelope, truncate bool) string {
	var b strings.Builder
	b.WriteString(strings.Join(env.Columns, "|"))
	for _, row := range env.Results {
		b.WriteByte('\n')
		for i, v := range row {
			if i > 0 {
				b.WriteByte('|')
			}
			var cell string
			switch x := v.(type) {
			case string:
				cell = x
			case nil:
				cell = "null"
			default:
				j, _ := json.Marshal(x)
				cell = string(j)
			}
			if truncate && len(cell) > 1000 {
				cell = cell[:1000] + "…"
			}
			b.WriteString(strings.NewReplacer("\n", " ", "|", "\\|").Replace(cell))
		}
	}
	if env.HasMore {
		fmt.Fprintf(&b, "\n(more rows than the %d shown)", env.Limit)
	}
	return b.String()
}

// taxonomyQuery is read_taxonomy's query (the CLI's read-data-schema).
type taxonomyQuery struct {
	Kind         string  `json:"kind"`
	EventName    *string `json:"event_name"`
	PropertyName *string `json:"property_name"`
	Entity       *string `json:"entity"`
	ActionID     *int64  `json:"action_id"`
	Limit        *int    `json:"limit"`
	Offset       *int    `json:"offset"`
}

func (s *Server) readTaxonomyTool(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	var args struct {
		Query *taxonomyQuery `json:"query"`
	}
	if !mcpArgs(c, &args) {
		return
	}
	if args.Query == nil {
		httpx.WriteError(c, httpx.Invalid("args.query", "query must be an object with a kind."))
		return
	}
	content, err := s.readTaxonomy(c.Request.Context(), p, *args.Query)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"success": true, "content": content})
}

func required(v *string, attr string) (string, error) {
	if v == nil || *v == "" {
		return "", httpx.Invalid(attr, attr[strings.LastIndex(attr, ".")+1:]+" is required for this kind.")
	}
	return *v, nil
}

func (s *Server) readTaxonomy(ctx context.Context, p *metadata.Project, q taxonomyQuery) (string, error) {
	switch q.Kind {
	case "events":
		return s.taxonomyEvents(ctx, p, q)
	case "event_properties":
		event, err := required(q.EventName, "args.query.event_name")
		if err != nil {
			return "", err
		}
		return s.taxonomyProperties(ctx, p, querybuilder.PropertyDefinitionsQuery{Kind: 1, Type: "event",
			EventNames: []string{event}, FilterByEventNames: true}, "event "+event)
	case "entity_properties":
		pq, what, err := s.entityKind(ctx, p, q.Entity)
		if err != nil {
			return "", err
		}
		return s.taxonomyProperties(ctx, p, pq, what)
	case "event_property_values", "entity_property_values":
		return s.taxonomyValues(ctx, p, q)
	case "action_properties", "action_property_values":
		return "", httpx.Invalid("args.query.kind", q.Kind+" is not served by insightd yet: read the properties of the action's events (event_properties) instead.")
	}
	return "", httpx.Invalid("args.query.kind", fmt.Sprintf("kind must be one of events, event_properties, entity_properties, event_property_values, entity_property_values, got %q.", q.Kind))
}

func (s *Server) taxonomyEvents(ctx context.Context, p *metadata.Project, q taxonomyQuery) (string, error) {
	eq := querybuilder.EventDefinitionsQuery{Limit: 500, Order: "-volume_30_day"}
	if q.Limit != nil {
		if *q.Limit < 1 || *q.Limit > 500 {
			return "", httpx.Invalid("args.query.limit", "limit must be 1 to 500.")
		}
		eq.Limit = *q.Limit
	}
	if q.Offset != nil {
		if *q.Offset < 0 {
			return "", httpx.Invalid("args.query.offset", "offset must be 0 or more.")
		}
		eq.Offset = *q.Offset
	}
	defs, total, err := s.eventDefinitions(ctx, p, eq)
	if err != nil {
		return "", err
	}
	if len(defs) == 0 {
		return "No events have been captured in this project yet.", nil
	}
	var b strings.Builder
	b.WriteString("events:\n")
	for _, d := range defs {
		fmt.Fprintf(&b, "- name: %s\n  volume_30_day: %d\n  last_seen_at: %s\n", yamlString(d.Name), d.Volume30Day, d.LastSeenAt.Format("2006-01-02T15:04:05Z"))
	}
	if eq.Offset+len(defs) < total {
		fmt.Fprintf(&b, "# %d of %d events; read the next page with offset %d.\n", len(defs), total, eq.Offset+len(defs))
	}
	return b.String(), nil
}

// entityKind is the property list of an entity: person, or a group type
// by its name (singular or plural).
func (s *Server) entityKind(ctx context.Context, p *metadata.Project, entity *string) (querybuilder.PropertyDefinitionsQuery, string, error) {
	name, err := required(entity, "args.query.entity")
	if err != nil {
		return querybuilder.PropertyDefinitionsQuery{}, "", err
	}
	switch strings.ToLower(name) {
	case "person", "persons":
		return querybuilder.PropertyDefinitionsQuery{Kind: 2, Type: "person"}, "persons", nil
	case "session", "sessions":
		return querybuilder.PropertyDefinitionsQuery{}, "", httpx.Invalid("args.query.entity",
			"session properties are the fixed columns of the sessions table: read them with execute_sql.")
	}
	types, err := s.store.GroupTypes(ctx, p.ID)
	if err != nil {
		return querybuilder.PropertyDefinitionsQuery{}, "", err
	}
	for _, t := range types {
		if strings.EqualFold(t.GroupType, name) || strings.EqualFold(t.NamePlural.String, name) || strings.EqualFold(t.GroupType+"s", name) {
			return querybuilder.PropertyDefinitionsQuery{Kind: 3, Type: "group", GroupTypeIndex: t.Index}, "group type " + t.GroupType, nil
		}
	}
	return querybuilder.PropertyDefinitionsQuery{}, "", httpx.Invalid("args.query.entity",
		fmt.Sprintf("entity must be person or one of the project's group types, got %q.", name))
}

func (s *Server) taxonomyProperties(ctx context.Context, p *metadata.Project, q querybuilder.PropertyDefinitionsQuery, what string) (string, error) {
	q.Limit = querybuilder.TaxonomyMaxLimit
	defs, _, err := s.propertyDefinitions(ctx, p, q)
	if err != nil {
		return "", err
	}
	byType := map[string][]string{}
	for _, d := range defs {
		t := "Unknown"
		if d.PropertyType != nil {
			t = *d.PropertyType
		}
		byType[t] = append(byType[t], d.Name)
	}
	if len(defs) == 0 {
		return "Properties do not exist in the taxonomy for the " + what + ".", nil
	}
	var b strings.Builder
	b.WriteString("properties:\n")
	for _, t := range []string{"String", "Numeric", "Boolean", "DateTime", "Unknown"} {
		if len(byType[t]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s:\n", t)
		for _, n := range byType[t] {
			fmt.Fprintf(&b, "  - name: %s\n", yamlString(n))
		}
	}
	return b.String(), nil
}

func (s *Server) taxonomyValues(ctx context.Context, p *metadata.Project, q taxonomyQuery) (string, error) {
	prop, err := required(q.PropertyName, "args.query.property_name")
	if err != nil {
		return "", err
	}
	var st querybuilder.Statement
	var what string
	if q.Kind == "event_property_values" {
		event, err := required(q.EventName, "args.query.event_name")
		if err != nil {
			return "", err
		}
		st, what = querybuilder.EventPropertyValues(s.cfg.Schema, p.ID, event, prop), "event "+event
	} else {
		pq, w, err := s.entityKind(ctx, p, q.Entity)
		if err != nil {
			return "", err
		}
		st, what = querybuilder.EntityPropertyValues(s.cfg.Schema, p.ID, pq.Kind, pq.GroupTypeIndex, prop), w
	}
	rows, err := s.analysis.Query(ctx, p.ID, st)
	if err != nil {
		return "", err
	}
	if len(rows.Data) == 0 {
		return fmt.Sprintf("The property %s has no values on the %s.", prop, what), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "property: %s\nsample_values:\n", yamlString(prop))
	for _, r := range rows.Data {
		v, _ := r[0].(string)
		fmt.Fprintf(&b, "- %s\n", yamlString(v))
	}
	if n := cellInt(rows.Data[0][1]); n > len(rows.Data) {
		fmt.Fprintf(&b, "# %d distinct values; the most common shown.\n", n)
	}
	return b.String(), nil
}

// yamlString quotes s as a YAML (and JSON) string.
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
