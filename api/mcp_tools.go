package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/api/taxonomy"
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

func (s *Server) readTaxonomyTool(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	var args struct {
		Query *taxonomy.ReadQuery `json:"query"`
	}
	if !mcpArgs(c, &args) {
		return
	}
	if args.Query == nil {
		httpx.WriteError(c, httpx.Invalid("args.query", "query must be an object with a kind."))
		return
	}
	content, err := s.taxonomy.Read(c.Request.Context(), p.ID, *args.Query)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"success": true, "content": content})
}
