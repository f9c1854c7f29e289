package querybuilder

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestGroupGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "groups"), map[string]string{
		"trend_group_filter": `{"events": [{"id": "$pageview"}], "properties": [{"key": "industry", "value": "finance", "type": "group", "group_type_index": 0},
			{"key": "size", "operator": "is_set", "type": "group", "group_type_index": 1}, {"key": "plan", "value": "pro", "type": "group", "group_type_index": 0}], "date_from": "-7d"}`,
		"trend_group_breakdown": `{"events": [{"id": "$pageview", "math": "unique_group", "math_group_type_index": 1}], "breakdown": "industry",
			"breakdown_type": "group", "breakdown_group_type_index": 0, "date_from": "-7d"}`,
	}, buildKind(&trendsKind))
	checkGolden(t, filepath.Join("testdata", "groups"), map[string]string{
		"funnel_group_breakdown": `{"events": [{"id": "$pageview"}, {"id": "signup"}], "aggregation_group_type_index": 2,
			"properties": [{"key": "industry", "value": "finance", "type": "group", "group_type_index": 0}],
			"breakdown": "size", "breakdown_type": "group", "breakdown_group_type_index": 2}`,
	}, buildKind(&funnelKind))
}

// TestGroupConditionsBindEverything: a group condition's key, value and
// type index are parameters, never text in the statement, and a
// statement reading no group property joins no group.
func TestGroupConditionsBindEverything(t *testing.T) {
	hostile := `x'); DROP TABLE groups; --\`
	p, err := ParseBody([]byte(`{"events": [{"id": "$pageview"}], "properties": [{"key": "` + strings.ReplaceAll(hostile, `\`, `\\`) +
		`", "value": "` + strings.ReplaceAll(hostile, `\`, `\\`) + `", "type": "group", "group_type_index": 3}], "breakdown": "` +
		strings.ReplaceAll(hostile, `\`, `\\`) + `", "breakdown_type": "group", "breakdown_group_type_index": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := buildKind(&trendsKind)(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stmt.SQL, "DROP") || !strings.Contains(stmt.SQL, "AS g3 ON g3.group_key = e.mat_group_3") {
		t.Fatalf("%s", stmt.SQL)
	}
	plain, err := buildKind(&trendsKind)(Params{"events": []byte(`[{"id": "$pageview"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.SQL, "group_key") {
		t.Fatalf("a statement without group properties joins groups:\n%s", plain.SQL)
	}
}

func TestGroupsQueryStatement(t *testing.T) {
	key := "acme"
	got := GroupsQuery{ProjectID: 7, GroupTypeIndex: 2, Search: "50%_off", Key: &key, Limit: 10, Offset: 20}.Statement()
	want := `SELECT group_type_index, group_key, group_properties, created_at, count() OVER () AS total
FROM (
    SELECT group_type_index, group_key, argMax(group_properties, version) AS group_properties,
        argMax(created_at, version) AS created_at
    FROM groups
    WHERE team_id = {team:Int64} AND group_type_index = {p0:UInt8} AND group_key = {p1:String}
    GROUP BY group_type_index, group_key
    HAVING positionCaseInsensitiveUTF8(group_key, {p2:String}) > 0 OR positionCaseInsensitiveUTF8(group_properties, {p2:String}) > 0
)
ORDER BY created_at DESC, group_key
LIMIT {p3:UInt64} OFFSET {p4:UInt64}`
	if got.SQL != want {
		t.Fatalf("got\n%s", got.SQL)
	}
	if got.Params["p2"] != "50%_off" || got.Params["p1"] != "acme" || got.Params["team"] != int64(7) {
		t.Fatalf("params %v", got.Params)
	}
}
