package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// Refresh is what a request's refresh parameter asks of the cache.
type Refresh int

const (
	// RefreshIfStale answers a cached result unless it is missing or stale.
	RefreshIfStale Refresh = iota
	// RefreshIfAllowed also recomputes a result older than its refresh
	// window (next_allowed_client_refresh): the insight's refresh=true.
	RefreshIfAllowed
	// RefreshAlways recomputes: force_blocking, and refresh=true on the
	// analysis endpoints.
	RefreshAlways
	// RefreshNever answers only what is cached, stale or not: force_cache.
	RefreshNever
)

// RefreshValues are the values PostHog clients send as refresh: the
// legacy true/false and the query API's modes. insightd computes every
// answer before responding, so the async modes behave as blocking ones.
var RefreshValues = []string{"true", "false", "1", "0", "blocking", "async", "lazy_async", "force_blocking", "force_async", "force_cache"}

// CheckRefresh refuses a refresh value no PostHog client sends, naming
// refresh.
func CheckRefresh(v string) error {
	if !slices.Contains(RefreshValues, strings.ToLower(v)) {
		return refreshInvalid()
	}
	return nil
}

func refreshInvalid() error {
	return &querybuilder.ValidationError{Attr: "refresh", Detail: "refresh must be one of " + strings.Join(RefreshValues, ", ") + "."}
}

// InsightRefresh reads a saved insight's or dashboard's refresh value
// (RefreshValues; CheckRefresh refuses others).
func InsightRefresh(v string) Refresh {
	switch strings.ToLower(v) {
	case "true", "1":
		return RefreshIfAllowed
	case "force_blocking", "force_async":
		return RefreshAlways
	case "force_cache":
		return RefreshNever
	}
	return RefreshIfStale
}

// AnalysisRefresh reads an analysis request's refresh (a legacy
// endpoint's or the query API's, as a JSON value or its text): any
// request to refresh recomputes, as PostHog's legacy analysis endpoints
// do. A value no PostHog client sends is refused naming refresh.
func AnalysisRefresh(v string) (Refresh, error) {
	switch s := strings.ToLower(strings.Trim(v, `" `)); {
	case s == "true" || s == "1" || s == "force_blocking" || s == "force_async":
		return RefreshAlways, nil
	case s == "force_cache":
		return RefreshNever, nil
	case s == "" || s == "null" || slices.Contains(RefreshValues, s):
		return RefreshIfStale, nil
	}
	return RefreshIfStale, refreshInvalid()
}

// ProjectQueryID is the ClickHouse query id an analysis of the project
// runs under for a client's client_query_id. Query ids are global to the
// engine; prefixing the project keeps a caller from cancelling another
// project's query by guessing or reusing its id.
func ProjectQueryID(projectID int64, clientQueryID string) string {
	return fmt.Sprintf("p%d_%s", projectID, clientQueryID)
}

// ClientQueryIDMax leaves room for ProjectQueryID's prefix (a 19-digit
// project id at most) within olap's 64-character query ids; PostHog
// clients send UUIDs (36 characters).
const ClientQueryIDMax = 43

// ClientQueryID is the project's query id of a client's client_query_id,
// refused naming client_query_id unless it is 1 to ClientQueryIDMax
// letters, digits, _ and -.
func ClientQueryID(projectID int64, id string) (string, error) {
	if id == "" || len(id) > ClientQueryIDMax || !olap.ValidQueryID(id) {
		return "", &querybuilder.ValidationError{Attr: "client_query_id", Detail: fmt.Sprintf(
			"client_query_id must be 1 to %d characters of letters, digits, _ and -.", ClientQueryIDMax)}
	}
	return ProjectQueryID(projectID, id), nil
}
