package importer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// byName lists a kind's records of a project by name (every name once).
func (s *server) byName(t *testing.T, project int64, kind, nameField string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	next := fmt.Sprintf("/api/projects/%d/%s/?limit=200", project, kind)
	for next != "" {
		pg := obj(s.call(t, "GET", next, nil, 200))
		for _, r := range pg["results"].([]any) {
			m := obj(r)
			if m["deleted"] == true {
				continue
			}
			name := fmt.Sprint(m[nameField])
			if _, dup := out[name]; dup {
				t.Errorf("project %d has two %s named %q", project, kind, name)
			}
			out[name] = m
		}
		next = ""
		if n, ok := pg["next"].(string); ok && n != "" {
			next = n[len(s.base):]
		}
	}
	return out
}

// names rewrites the action and cohort ids a document names into their
// names, so a source's and a target's documents compare.
func names(t *testing.T, v any, actions, cohorts map[int64]string) any {
	t.Helper()
	b, _ := json.Marshal(v)
	var doc any
	_ = json.Unmarshal(b, &doc)
	resultIDs(doc, actions, cohorts)
	out, err := walkRefs(doc, nil, func(r ref) (int64, error) {
		m := actions
		if r.kind == KindCohort {
			m = cohorts
		}
		if _, ok := m[r.id]; !ok {
			return 0, fmt.Errorf("%s %d is not in the project", r.kind, r.id)
		}
		// The name's position among the sorted names stands for it.
		var all []string
		for _, n := range m {
			all = append(all, n)
		}
		sort.Strings(all)
		return int64(sort.SearchStrings(all, m[r.id]) + 1), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func idNames(rs map[string]map[string]any) map[int64]string {
	out := map[int64]string{}
	for name, r := range rs {
		out[id(r)] = name
	}
	return out
}

func sameKeys(t *testing.T, kind string, a, b map[string]map[string]any) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: the source has %d, the target %d", kind, len(a), len(b))
	}
	for n := range a {
		if b[n] == nil {
			t.Errorf("%s %q was not copied", kind, n)
		}
	}
}

func equal(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	if !reflect.DeepEqual(va, vb) {
		t.Errorf("%s differs:\n source %.3000s\n target %.3000s", what, ja, jb)
	}
}

// compareProjects checks the target is the source's copy: the same
// events, persons, groups, and each record once with the same results.
func compareProjects(t *testing.T, s *server, src, dst int64) {
	t.Helper()
	hogql := func(project int64, q string) any {
		return obj(s.call(t, "POST", fmt.Sprintf("/api/projects/%d/query/", project), map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": q}}, 200))["results"]
	}
	for _, q := range []string{
		"SELECT event, count(), count(DISTINCT person_id), min(timestamp), max(timestamp) FROM events GROUP BY event ORDER BY event",
		"SELECT count() FROM persons",
		"SELECT distinct_id, count() FROM events GROUP BY distinct_id ORDER BY distinct_id",
	} {
		equal(t, q, hogql(src, q), hogql(dst, q))
	}
	persons := func(project int64) map[string]any {
		out := map[string]any{}
		for _, p := range obj(s.call(t, "GET", fmt.Sprintf("/api/projects/%d/persons/?limit=1000", project), nil, 200))["results"].([]any) {
			var ids []string
			for _, d := range obj(p)["distinct_ids"].([]any) {
				ids = append(ids, d.(string))
			}
			sort.Strings(ids)
			out[fmt.Sprint(ids)] = obj(p)["properties"]
		}
		return out
	}
	equal(t, "persons (distinct ids and properties)", persons(src), persons(dst))
	for idx := 0; idx < 2; idx++ {
		groups := func(project int64) any {
			out := map[string]any{}
			for _, g := range obj(s.call(t, "GET", fmt.Sprintf("/api/projects/%d/groups/?group_type_index=%d", project, idx), nil, 200))["results"].([]any) {
				out[obj(g)["group_key"].(string)] = obj(g)["group_properties"]
			}
			return out
		}
		equal(t, "groups of type "+strconv.Itoa(idx), groups(src), groups(dst))
	}
	types := func(project int64) any {
		var out []string
		for _, g := range s.call(t, "GET", fmt.Sprintf("/api/projects/%d/groups_types/", project), nil, 200).([]any) {
			out = append(out, fmt.Sprint(obj(g)["group_type_index"], obj(g)["group_type"]))
		}
		return out
	}
	equal(t, "group types", types(src), types(dst))

	sa, da := s.byName(t, src, "actions", "name"), s.byName(t, dst, "actions", "name")
	sc, dc := s.byName(t, src, "cohorts", "name"), s.byName(t, dst, "cohorts", "name")
	saN, daN, scN, dcN := idNames(sa), idNames(da), idNames(sc), idNames(dc)
	sameKeys(t, "actions", sa, da)
	sameKeys(t, "cohorts", sc, dc)
	for n, a := range sa {
		if b := da[n]; b != nil {
			equal(t, "action "+n+" steps", names(t, a["steps"], saN, scN), names(t, b["steps"], daN, dcN))
			equal(t, "action "+n+" tags", a["tags"], b["tags"])
		}
	}
	for n, a := range sc {
		b := dc[n]
		if b == nil {
			continue
		}
		count := func(project int64, c map[string]any) any {
			for i := 0; i < 100; i++ {
				r := obj(s.call(t, "GET", fmt.Sprintf("/api/projects/%d/cohorts/%d/", project, id(c)), nil, 200))
				if r["is_calculating"] != true {
					return r["count"]
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Fatalf("cohort %q is still calculating", n)
			return nil
		}
		equal(t, "cohort "+n+" count", count(src, a), count(dst, b))
		equal(t, "cohort "+n+" is_static", a["is_static"], b["is_static"])
		equal(t, "cohort "+n+" filters", names(t, a["filters"], saN, scN), names(t, b["filters"], daN, dcN))
	}

	si, di := s.byName(t, src, "insights", "name"), s.byName(t, dst, "insights", "name")
	sameKeys(t, "insights", si, di)
	for n, a := range si {
		b := di[n]
		if b == nil {
			continue
		}
		for _, f := range []string{"description", "tags", "favorited", "saved"} {
			equal(t, "insight "+n+" "+f, a[f], b[f])
		}
		equal(t, "insight "+n+" filters", names(t, a["filters"], saN, scN), names(t, b["filters"], daN, dcN))
		equal(t, "insight "+n+" query", names(t, a["query"], saN, scN), names(t, b["query"], daN, dcN))
		result := func(project int64, in map[string]any) any {
			return obj(s.call(t, "GET", fmt.Sprintf("/api/projects/%d/insights/%d/?refresh=blocking", project, id(in)), nil, 200))["result"]
		}
		ra, rb := withoutURLs(result(src, a)), withoutURLs(result(dst, b))
		if ra == nil {
			t.Errorf("insight %s has no result in the source", n)
		}
		equal(t, "insight "+n+" result", names(t, ra, saN, scN), names(t, rb, daN, dcN))
	}
	siN, diN := idNames(si), idNames(di)

	sd, dd := s.byName(t, src, "dashboards", "name"), s.byName(t, dst, "dashboards", "name")
	sameKeys(t, "dashboards", sd, dd)
	tiles := func(project int64, d map[string]any) any {
		full := obj(s.call(t, "GET", fmt.Sprintf("/api/projects/%d/dashboards/%d/", project, id(d)), nil, 200))
		var out []any
		for _, tl := range full["tiles"].([]any) {
			m := obj(tl)
			what := ""
			if in := obj(m["insight"]); in != nil {
				what = "insight " + fmt.Sprint(in["name"]) + " result " + fmt.Sprint(in["result"] != nil)
			}
			if tx := obj(m["text"]); tx != nil {
				what = "text " + fmt.Sprint(tx["body"])
			}
			out = append(out, []any{m["order"], what, m["layouts"], m["color"]})
		}
		return []any{full["description"], full["pinned"], full["filters"], full["tags"], out}
	}
	for n, a := range sd {
		if b := dd[n]; b != nil {
			equal(t, "dashboard "+n, tiles(src, a), tiles(dst, b))
		}
	}

	sn, dn := s.byName(t, src, "annotations", "content"), s.byName(t, dst, "annotations", "content")
	sameKeys(t, "annotations", sn, dn)
	for n, a := range sn {
		if b := dn[n]; b != nil {
			about := func(r map[string]any, ins map[int64]string) any {
				item := ""
				if v, ok := r["dashboard_item"].(float64); ok {
					item = ins[int64(v)]
				}
				return []any{r["date_marker"], r["scope"], item}
			}
			equal(t, "annotation "+n, about(a, siN), about(b, diN))
		}
	}
}

// withoutURLs drops the links of a result (persons_urls, people_url):
// they name the project and its ids in URL-encoded JSON, which differ by
// design; what they list is compared through the counts.
func withoutURLs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if strings.HasSuffix(k, "_url") || strings.HasSuffix(k, "_urls") {
				delete(x, k)
				continue
			}
			x[k] = withoutURLs(c)
		}
	case []any:
		for i, c := range x {
			x[i] = withoutURLs(c)
		}
	}
	return v
}

// resultIDs names the ids a result carries outside filters: a funnel
// step's action_id, a cohort breakdown's breakdown_value.
func resultIDs(v any, actions, cohorts map[int64]string) {
	switch x := v.(type) {
	case map[string]any:
		if n, ok := x["action_id"].(float64); ok && x["type"] == "actions" {
			x["action_id"] = "action " + actions[int64(n)]
		}
		if n, ok := x["breakdown_value"].(float64); ok && obj(x["filter"])["breakdown_type"] == "cohort" {
			x["breakdown_value"] = "cohort " + cohorts[int64(n)]
		}
		for _, c := range x {
			resultIDs(c, actions, cohorts)
		}
	case []any:
		for _, c := range x {
			resultIDs(c, actions, cohorts)
		}
	}
}
