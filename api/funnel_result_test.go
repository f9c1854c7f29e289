package api

// Funnel and timing results over HTTP against PostgreSQL and the embedded
// ClickHouse: small event sets sent through /batch/, compared with the
// brute-force reference (funnel_reference_test.go) and, for the key cases,
// with numbers worked out by hand (which also checks the reference).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata/metadatatest"
)

// fday is the day most cases happen on: Tuesday 3 March 2026, noon UTC.
var fday = time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)

// fev is an event of distinct id who, d after fday, with a random uuid
// and "key", "value" property pairs.
func fev(who, name string, d time.Duration, kv ...string) refEvent {
	return fevID(who, name, d, uuid.NewString(), kv...)
}

// fevID is fev with a chosen uuid, to order events of the same time.
func fevID(who, name string, d time.Duration, id string, kv ...string) refEvent {
	props := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		props[kv[i]] = kv[i+1]
	}
	return refEvent{UUID: id, DistinctID: who, Event: name, At: fday.Add(d), Props: props}
}

// fident merges the anonymous distinct id into user.
func fident(user, anon string, d time.Duration) refEvent {
	return refEvent{UUID: uuid.NewString(), DistinctID: user, Event: "$identify", At: fday.Add(d),
		Props: map[string]any{"$anon_distinct_id": anon}}
}

// funnelOf is an ordered-by-default funnel over named steps with the usual
// date range (1 to 10 March).
func funnelOf(order string, steps ...string) refFunnel {
	f := refFunnel{Order: order, DateFrom: "2026-03-01", DateTo: "2026-03-10"}
	for _, s := range steps {
		f.Steps = append(f.Steps, refStep{Event: s})
	}
	return f
}

func (f refFunnel) hours(n int) refFunnel {
	f.WindowInterval, f.WindowUnit = n, "hour"
	return f
}

// st is a hand-written step: its count, then its average and median
// conversion times when it has them.
func st(count int, avgMedian ...float64) refStepResult {
	r := refStepResult{Count: count}
	if len(avgMedian) == 2 {
		r.Avg, r.Median = &avgMedian[0], &avgMedian[1]
	}
	return r
}

func conditions(props map[string]string) []any {
	var out []any
	for k, v := range props {
		out = append(out, map[string]any{"key": k, "value": v, "operator": "exact", "type": "event"})
	}
	return out
}

// filter is the request body for f; extra is merged last (a nil value
// removes the key).
func (f refFunnel) filter(extra map[string]any) map[string]any {
	var events []any
	for i, s := range f.Steps {
		e := map[string]any{"id": s.Event, "type": "events", "order": i, "name": s.Event}
		if s.Any {
			e["id"], e["name"] = nil, "All events"
		}
		if len(s.Props) > 0 {
			e["properties"] = conditions(s.Props)
		}
		events = append(events, e)
	}
	m := map[string]any{"insight": "FUNNELS", "events": events, "date_from": f.DateFrom, "date_to": f.DateTo, "interval": "day"}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("funnel_order_type", f.Order, f.Order != "")
	set("funnel_window_interval", f.WindowInterval, f.WindowInterval != 0)
	set("funnel_window_interval_unit", f.WindowUnit, f.WindowUnit != "")
	set("funnel_window_days", f.WindowDays, f.WindowDays != 0)
	set("properties", conditions(f.Properties), len(f.Properties) > 0)
	set("breakdown", f.Breakdown, f.Breakdown != "")
	set("breakdown_type", f.BreakdownType, f.BreakdownType != "")
	set("breakdown_attribution_type", f.Attribution, f.Attribution != "")
	set("breakdown_attribution_value", f.AttributionStep, f.Attribution == "step")
	set("breakdown_limit", f.BreakdownLimit, f.BreakdownLimit != 0)
	set("funnel_from_step", f.FromStep, f.FromStep != 0)
	set("funnel_to_step", f.ToStep, f.ToStep != 0)
	set("aggregation_group_type_index", f.GroupIndex, f.GroupIndex != 0)
	if len(f.Exclusions) > 0 {
		var xs []any
		for _, x := range f.Exclusions {
			xs = append(xs, map[string]any{"id": x.Event, "type": "events", "name": x.Event,
				"funnel_from_step": x.From, "funnel_to_step": x.To})
		}
		m["exclusions"] = xs
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// funnelEnv is one server; every case gets its own project on it.
type funnelEnv struct {
	s *Server
	h http.Handler
	n int
}

func newFunnelEnv(t *testing.T) *funnelEnv {
	t.Helper()
	s := New(testConfig(), quietLog(), metadatatest.NewStore(t), engine)
	t.Cleanup(s.writer.Close)
	return &funnelEnv{s: s, h: s.Handler()}
}

type funnelProject struct {
	env        *funnelEnv
	id         int64
	org        uuid.UUID
	token, key string
}

// project makes a fresh project holding events.
func (e *funnelEnv) project(t *testing.T, events []refEvent) *funnelProject {
	t.Helper()
	e.n++
	b, err := e.s.store.Bootstrap(context.Background(), fmt.Sprintf("funnel%d@example.com", e.n), fmt.Sprintf("Funnels %d", e.n), "Funnels")
	if err != nil {
		t.Fatal(err)
	}
	p := &funnelProject{env: e, id: b.ProjectID, org: b.OrganizationID, token: b.ProjectAPIToken, key: b.PersonalAPIKey}
	p.capture(t, events)
	return p
}

// capture sends events through /batch/, each $identify in a request of
// its own after the events before it.
func (p *funnelProject) capture(t *testing.T, events []refEvent) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range events {
		if seen[strings.ToLower(e.UUID)] {
			t.Fatalf("uuid %s twice: ingestion would keep one of the events", e.UUID)
		}
		seen[strings.ToLower(e.UUID)] = true
	}
	var batch []any
	flush := func() {
		if len(batch) == 0 {
			return
		}
		body := mustJSON(t, map[string]any{"api_key": p.token, "batch": batch})
		r := httptest.NewRequest("POST", "/batch/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		p.env.h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("capture: %d %s", w.Code, w.Body)
		}
		batch = nil
	}
	for _, e := range events {
		if e.Event == "$identify" {
			flush()
		}
		batch = append(batch, map[string]any{"event": e.Event, "distinct_id": e.DistinctID, "uuid": e.UUID,
			"timestamp": e.At.UTC().Format("2006-01-02T15:04:05.000000Z"), "properties": e.Props})
		if e.Event == "$identify" {
			flush()
		}
	}
	flush()
}

// ask runs an analysis (kind funnel or timing) by POST, or by GET with
// the values JSON-encoded in the query string.
func (p *funnelProject) ask(t *testing.T, method, kind string, filter map[string]any) (int, map[string]json.RawMessage) {
	t.Helper()
	path := fmt.Sprintf("/api/projects/%d/insights/%s/", p.id, kind)
	var r *http.Request
	if method == "GET" {
		q := url.Values{}
		for k, v := range filter {
			if s, ok := v.(string); ok {
				q.Set(k, s)
			} else {
				q.Set(k, string(mustJSON(t, v)))
			}
		}
		r = httptest.NewRequest("GET", path+"?"+q.Encode(), nil)
	} else {
		r = httptest.NewRequest("POST", path, bytes.NewReader(mustJSON(t, filter)))
		r.Header.Set("Content-Type", "application/json")
	}
	r.Host = "insightd.test"
	r.Header.Set("Authorization", "Bearer "+p.key)
	w := httptest.NewRecorder()
	p.env.h.ServeHTTP(w, r)
	var out map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, path, w.Code, w.Body)
	}
	return w.Code, out
}

// result runs a valid analysis and decodes its result into v.
func (p *funnelProject) result(t *testing.T, kind string, filter map[string]any, v any) {
	t.Helper()
	code, body := p.ask(t, "POST", kind, filter)
	if code != 200 {
		t.Fatalf("%s: %d %s", kind, code, mustJSON(t, body))
	}
	if err := json.Unmarshal(body["result"], v); err != nil {
		t.Fatalf("%s result %s: %v", kind, body["result"], err)
	}
}

// wantInvalid checks a 400 with the error body naming attr ("" = any).
func (p *funnelProject) wantInvalid(t *testing.T, kind string, filter map[string]any, attr string) {
	t.Helper()
	code, body := p.ask(t, "POST", kind, filter)
	var got string
	json.Unmarshal(body["attr"], &got)
	if code != 400 || body["code"] == nil || body["detail"] == nil || attr != "" && got != attr {
		t.Fatalf("want 400 naming %q, got %d %s", attr, code, mustJSON(t, body))
	}
}

// apiStep is one step of a funnel answer.
type apiStep struct {
	ActionID       any      `json:"action_id"`
	Name           any      `json:"name"`
	CustomName     any      `json:"custom_name"`
	Order          *int     `json:"order"`
	Count          *float64 `json:"count"`
	Type           string   `json:"type"`
	Avg            *float64 `json:"average_conversion_time"`
	Median         *float64 `json:"median_conversion_time"`
	ConvertedURL   any      `json:"converted_people_url"`
	DroppedURL     any      `json:"dropped_people_url"`
	People         []any    `json:"people"`
	Breakdown      any      `json:"breakdown"`
	BreakdownValue any      `json:"breakdown_value"`
}

func asRef(steps []apiStep) []refStepResult {
	out := make([]refStepResult, len(steps))
	for i, s := range steps {
		out[i] = refStepResult{Count: -1, Avg: s.Avg, Median: s.Median}
		if s.Count != nil {
			out[i].Count = int(*s.Count)
		}
	}
	return out
}

func closeTo(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) || d < 1e-9
}

func samePtr(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return closeTo(*a, *b)
}

func sameSteps(a, b []refStepResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Count != b[i].Count || !samePtr(a[i].Avg, b[i].Avg) || !samePtr(a[i].Median, b[i].Median) {
			return false
		}
	}
	return true
}

func stepsText(steps []refStepResult) string {
	f := func(p *float64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprintf("%.6g", *p)
	}
	var parts []string
	for _, s := range steps {
		parts = append(parts, fmt.Sprintf("%d(avg %s med %s)", s.Count, f(s.Avg), f(s.Median)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func seriesText(ss []refSeries) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, s.Value+": "+stepsText(s.Steps))
	}
	return strings.Join(parts, "; ")
}

func sameSeries(a, b []refSeries) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Value != b[i].Value || !sameSteps(a[i].Steps, b[i].Steps) {
			return false
		}
	}
	return true
}

// checkSteps asks for f's steps and compares them with the reference
// and, when given, the hand-written steps.
func checkSteps(t *testing.T, p *funnelProject, events []refEvent, f refFunnel, extra map[string]any, hand []refStepResult) {
	t.Helper()
	want := f.stepResults(events)
	if hand != nil && !sameSteps(want, hand) {
		t.Errorf("the reference disagrees with the hand-written steps:\nreference %s\nhand      %s", stepsText(want), stepsText(hand))
	}
	var got []apiStep
	p.result(t, "funnel", f.filter(extra), &got)
	if !sameSteps(asRef(got), want) {
		t.Errorf("server %s\nwant   %s", stepsText(asRef(got)), stepsText(want))
	}
	for i, s := range got {
		if s.Order == nil || *s.Order != i || s.Type != "events" || s.People == nil {
			t.Errorf("step %d: order %v type %q people %v", i, s.Order, s.Type, s.People)
		}
		if want := f.Steps[i].Event; !f.Steps[i].Any && (s.Name != want || s.ActionID != want) {
			t.Errorf("step %d: name %v action_id %v, want %q", i, s.Name, s.ActionID, want)
		}
	}
}

// checkBreakdown does checkSteps for a funnel with a breakdown.
func checkBreakdown(t *testing.T, p *funnelProject, events []refEvent, f refFunnel, hand []refSeries) {
	t.Helper()
	want := f.breakdownResults(events)
	if hand != nil && !sameSeries(want, hand) {
		t.Errorf("the reference disagrees with the hand-written series:\nreference %s\nhand      %s", seriesText(want), seriesText(hand))
	}
	var got [][]apiStep
	p.result(t, "funnel", f.filter(nil), &got)
	var gotSeries []refSeries
	for _, steps := range got {
		s := refSeries{Steps: asRef(steps)}
		if len(steps) > 0 {
			s.Value = fmt.Sprint(steps[0].BreakdownValue)
		}
		for i, st := range steps {
			if fmt.Sprint(st.BreakdownValue) != s.Value || fmt.Sprint(st.Breakdown) != s.Value {
				t.Errorf("series %q step %d: breakdown %v breakdown_value %v", s.Value, i, st.Breakdown, st.BreakdownValue)
			}
		}
		gotSeries = append(gotSeries, s)
	}
	if !sameSeries(gotSeries, want) {
		t.Errorf("server %s\nwant   %s", seriesText(gotSeries), seriesText(want))
	}
}

type timeToConvert struct {
	Bins [][]float64 `json:"bins"`
	Avg  *float64    `json:"average_conversion_time"`
}

type timing struct {
	timeToConvert
	Median  *float64 `json:"median_conversion_time"`
	P90     *float64 `json:"p90_conversion_time"`
	P99     *float64 `json:"p99_conversion_time"`
	Persons *float64 `json:"persons"`
}

func sameBins(got [][]float64, want [][2]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if len(got[i]) != 2 || !closeTo(got[i][0], want[i][0]) || got[i][1] != want[i][1] {
			return false
		}
	}
	return true
}

func ptr(x float64) *float64 { return &x }

// meanOf is the mean of ts, nil when there are none.
func meanOf(ts []float64) *float64 {
	if len(ts) == 0 {
		return nil
	}
	return ptr(refMean(ts))
}

// checkTimeToConvert compares funnel_viz_type=time_to_convert with the
// reference; hand (if not nil) are the bins worked out by hand.
func checkTimeToConvert(t *testing.T, p *funnelProject, events []refEvent, f refFunnel, binCount int, hand [][2]float64) {
	t.Helper()
	ts := f.conversionTimes(events)
	want := refBins(ts, binCount)
	if hand != nil && fmt.Sprint(want) != fmt.Sprint(hand) {
		t.Errorf("the reference bins %v disagree with the hand-written %v", want, hand)
	}
	extra := map[string]any{"funnel_viz_type": "time_to_convert"}
	if binCount != 0 {
		extra["bin_count"] = binCount
	}
	var got timeToConvert
	p.result(t, "funnel", f.filter(extra), &got)
	if !sameBins(got.Bins, want) || !samePtr(got.Avg, meanOf(ts)) {
		t.Errorf("server bins %v avg %v, want bins %v avg %v", got.Bins, fmtPtr(got.Avg), want, fmtPtr(meanOf(ts)))
	}
}

// checkTiming compares the timing endpoint with the reference.
func checkTiming(t *testing.T, p *funnelProject, events []refEvent, f refFunnel, binCount int) {
	t.Helper()
	ts := f.conversionTimes(events)
	var median, p90, p99 *float64
	if len(ts) > 0 {
		median, p90, p99 = ptr(refQuantile(ts, 0.5)), ptr(refQuantile(ts, 0.9)), ptr(refQuantile(ts, 0.99))
	}
	extra := map[string]any{}
	if binCount != 0 {
		extra["bin_count"] = binCount
	}
	var got timing
	p.result(t, "timing", f.filter(extra), &got)
	want := refBins(ts, binCount)
	if !sameBins(got.Bins, want) || !samePtr(got.Avg, meanOf(ts)) || !samePtr(got.Median, median) ||
		!samePtr(got.P90, p90) || !samePtr(got.P99, p99) || !samePtr(got.Persons, ptr(float64(len(ts)))) {
		t.Errorf("timing: bins %v avg %s median %s p90 %s p99 %s persons %s\nwant bins %v avg %s median %s p90 %s p99 %s persons %d",
			got.Bins, fmtPtr(got.Avg), fmtPtr(got.Median), fmtPtr(got.P90), fmtPtr(got.P99), fmtPtr(got.Persons),
			want, fmtPtr(meanOf(ts)), fmtPtr(median), fmtPtr(p90), fmtPtr(p99), len(ts))
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// checkTrends compares funnel_viz_type=trends (interval day) with the
// reference; hand (if not nil) are the rates worked out by hand.
func checkTrends(t *testing.T, p *funnelProject, events []refEvent, f refFunnel, hand []float64) {
	t.Helper()
	rates, days := f.trendRates(events)
	if hand != nil && !sameFloats(rates, hand) {
		t.Errorf("the reference rates %v disagree with the hand-written %v", rates, hand)
	}
	var got []struct {
		Count  float64   `json:"count"`
		Data   []float64 `json:"data"`
		Days   []string  `json:"days"`
		Labels []string  `json:"labels"`
	}
	p.result(t, "funnel", f.filter(map[string]any{"funnel_viz_type": "trends"}), &got)
	if len(got) != 1 {
		t.Fatalf("want one trend series, got %d: %+v", len(got), got)
	}
	g := got[0]
	if !sameFloats(g.Data, rates) || fmt.Sprint(g.Days) != fmt.Sprint(days) || int(g.Count) != len(days) || len(g.Labels) != len(days) {
		t.Errorf("server count %v data %v days %v labels %v\nwant count %d data %v days %v", g.Count, g.Data, g.Days, g.Labels, len(days), rates, days)
	}
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !closeTo(a[i], b[i]) {
			return false
		}
	}
	return true
}

// stepsCase is one steps-funnel case: events, the funnel, extra request
// values and (for the key cases) the steps worked out by hand.
type stepsCase struct {
	name   string
	events []refEvent
	f      refFunnel
	extra  map[string]any
	hand   []refStepResult
}

func runStepsCases(t *testing.T, cases []stepsCase) {
	t.Helper()
	env := newFunnelEnv(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := env.project(t, tc.events)
			checkSteps(t, p, tc.events, tc.f, tc.extra, tc.hand)
		})
	}
}

const (
	h  = time.Hour
	mi = time.Minute
	sc = time.Second
	us = time.Microsecond
	dy = 24 * time.Hour
)

func TestFunnelOrderTypes(t *testing.T) {
	withSteps := func(f refFunnel, props map[string]string, i int) refFunnel {
		f.Steps = append([]refStep(nil), f.Steps...)
		f.Steps[i].Props = props
		return f
	}
	anyStep := funnelOf("", "A", "B")
	anyStep.Steps[1] = refStep{Any: true}
	anyUnordered := anyStep
	anyUnordered.Order = "unordered"
	webOnly := funnelOf("strict", "A", "B")
	webOnly.Properties = map[string]string{"src": "web"}
	runStepsCases(t, []stepsCase{
		{
			name: "ordered: a person counts once, at the furthest step, timed by the latest best attempt",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", h), fev("p1", "C", 3*h),
				fev("p2", "A", 0), fev("p2", "C", h), fev("p2", "B", 2*h),
				fev("p3", "B", 0), fev("p3", "A", h),
				fev("p4", "A", 0), fev("p4", "A", h), fev("p4", "B", 90*mi),
			},
			f: funnelOf("", "A", "B", "C"),
			// B after A: p1 3600, p2 7200, p4 1800 (from its second A).
			hand: []refStepResult{st(4), st(3, 4200, 3600), st(1, 7200, 7200)},
		},
		{
			name: "ordered: A -> A -> B needs two A events, one event advancing one step",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", 10*mi),
				fev("p2", "A", 0), fev("p2", "A", 5*mi), fev("p2", "B", 20*mi),
				fev("p3", "A", 0), fev("p3", "B", mi), fev("p3", "A", 2*mi), fev("p3", "B", 3*mi),
			},
			f:    funnelOf("ordered", "A", "A", "B"),
			hand: []refStepResult{st(3), st(2, 210, 210), st(2, 480, 480)},
		},
		{
			name: "among the best attempts starting at the same time, the one later by uuid is counted",
			events: []refEvent{
				fevID("p1", "A", 0, "10000000-0000-4000-8000-000000000000"), fevID("p1", "A", 0, "20000000-0000-4000-8000-000000000000"),
				fev("p1", "A", 20*mi),
			},
			// A1 -> A2 (0 s) and A2 -> A3 (1200 s) both reach step 2: A2 starts later.
			f:    funnelOf("", "A", "A", "B"),
			hand: []refStepResult{st(1), st(1, 1200, 1200), st(0)},
		},
		{
			name: "strict: each step must be the person's very next event",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "X", mi), fev("p1", "B", 2*mi),
				fev("p2", "A", 0), fev("p2", "B", 2*mi),
				fev("p3", "A", 0), fev("p3", "A", mi), fev("p3", "B", 3*mi),
				fev("p4", "A", 0), fev("p4", "B", mi),
			},
			f:    funnelOf("strict", "A", "B"),
			hand: []refStepResult{st(4), st(3, 100, 120)},
		},
		{
			name: "strict: events the global filters drop are not read, so they do not break the sequence",
			events: []refEvent{
				fev("p1", "A", 0, "src", "web"), fev("p1", "X", mi, "src", "app"), fev("p1", "B", 2*mi, "src", "web"),
				fev("p2", "A", 0, "src", "web"), fev("p2", "X", mi, "src", "web"), fev("p2", "B", 2*mi, "src", "web"),
				fev("p3", "A", 0, "src", "app"), fev("p3", "B", mi, "src", "web"),
			},
			f:    webOnly,
			hand: []refStepResult{st(2), st(1, 120, 120)},
		},
		{
			name: "unordered: steps in any order inside the window from the entry",
			events: []refEvent{
				fev("p1", "C", 0), fev("p1", "B", 10*mi), fev("p1", "A", 30*mi),
				fev("p2", "B", 0), fev("p2", "A", 20*mi), fev("p2", "C", 2*h),
				fev("p3", "A", 0),
				fev("p4", "A", 0), fev("p4", "C", 61*mi), fev("p4", "B", 70*mi),
			},
			f:    funnelOf("unordered", "A", "B", "C").hours(1),
			hand: []refStepResult{st(4), st(3, 780, 600), st(1, 1200, 1200)},
		},
		{
			name: "unordered: a step definition repeated twice needs two events",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", mi),
				fev("p2", "A", 0), fev("p2", "B", mi), fev("p2", "A", 2*mi),
				fev("p3", "B", 0), fev("p3", "B", mi),
			},
			f:    funnelOf("unordered", "A", "A", "B"),
			hand: []refStepResult{st(3), st(2, 60, 60), st(1, 60, 60)},
		},
		{
			name: "events at the same time are ordered by their uuid's hex text",
			events: []refEvent{
				// The halves disagree: ordered by the second half first, p1 and p2 would swap.
				fevID("p1", "A", 0, "10000000-0000-4000-8000-000000000002"), fevID("p1", "B", 0, "20000000-0000-4000-8000-000000000001"),
				fevID("p2", "A", 0, "20000000-0000-4000-8000-000000000003"), fevID("p2", "B", 0, "10000000-0000-4000-8000-000000000004"),
				// Differing in the last bytes only: 0000000000ff < 000000000100.
				fevID("p3", "A", 0, "00000000-0000-4000-8000-0000000000ff"), fevID("p3", "B", 0, "00000000-0000-4000-8000-000000000100"),
				fevID("p4", "A", 0, "00000000-0000-4000-8000-000000000201"), fevID("p4", "B", 0, "00000000-0000-4000-8000-0000000002ff"),
				fevID("p5", "B", 0, "00000000-0000-4000-9000-000000000000"), fevID("p5", "A", 0, "00000000-0000-4000-a000-000000000000"),
			},
			f:    funnelOf("", "A", "B"),
			hand: []refStepResult{st(5), st(3, 0, 0)},
		},
		{
			name: "strict: an event at the same time but an earlier uuid sits between the steps",
			events: []refEvent{
				fevID("p1", "A", 0, "a0000000-0000-4000-8000-000000000000"), fevID("p1", "X", 0, "b0000000-0000-4000-8000-000000000000"),
				fevID("p1", "B", 0, "c0000000-0000-4000-8000-000000000000"),
				fevID("p2", "A", 0, "a1000000-0000-4000-8000-000000000000"), fevID("p2", "X", 0, "c1000000-0000-4000-8000-000000000000"),
				fevID("p2", "B", 0, "b1000000-0000-4000-8000-000000000000"),
			},
			f:    funnelOf("strict", "A", "B"),
			hand: []refStepResult{st(2), st(1, 0, 0)},
		},
		{
			name: "a step's own properties narrow its events",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", mi, "plan", "free"), fev("p1", "B", 3*mi, "plan", "pro"),
				fev("p2", "A", 0), fev("p2", "B", mi, "plan", "free"),
			},
			f:    withSteps(funnelOf("", "A", "B"), map[string]string{"plan": "pro"}, 1),
			hand: []refStepResult{st(2), st(1, 180, 180)},
		},
		{
			name: "a step with id null is any event",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "Z", 5*mi),
				fev("p2", "A", 0),
			},
			f:    anyStep,
			hand: []refStepResult{st(2), st(1, 300, 300)},
		},
		{
			name: "unordered: one event matching two different definitions counts for both",
			events: []refEvent{
				fev("p1", "A", 0),
				fev("p2", "Z", 0),
			},
			// p1's A is both "A" and "any event"; p2's Z is only "any event".
			f:    anyUnordered,
			hand: []refStepResult{st(2), st(1, 0, 0)},
		},
		{
			name: "events after date_to are not read, even inside the window",
			events: []refEvent{
				fev("p1", "A", 11*h), fev("p1", "B", 13*h),
				fev("p2", "A", 0), fev("p2", "B", h),
			},
			f:    refFunnel{Steps: []refStep{{Event: "A"}, {Event: "B"}}, DateFrom: "2026-03-01", DateTo: "2026-03-03"},
			hand: []refStepResult{st(2), st(1, 3600, 3600)},
		},
	})
}

func TestFunnelConversionWindowEdges(t *testing.T) {
	// Each case: B exactly at the window converts, one second (and one
	// microsecond) past does not.
	edge := func(w time.Duration) []refEvent {
		return []refEvent{
			fev("at", "A", 0), fev("at", "B", w),
			fev("second-past", "A", 0), fev("second-past", "B", w+sc),
			fev("micro-past", "A", 0), fev("micro-past", "B", w+us),
			fev("micro-before", "A", 0), fev("micro-before", "B", w-us),
		}
	}
	win := func(n int, unit string) refFunnel {
		f := funnelOf("", "A", "B")
		f.WindowInterval, f.WindowUnit = n, unit
		f.DateTo = "2026-04-10"
		return f
	}
	days := func(n int) refFunnel {
		f := win(5, "minute")
		f.WindowDays = n
		return f
	}
	secs := func(w time.Duration) float64 { return w.Seconds() }
	hand := func(w time.Duration) []refStepResult {
		return []refStepResult{st(4), st(2, (secs(w)+secs(w-us))/2, (secs(w)+secs(w-us))/2)}
	}
	typeSynonym := win(2, "HOUR")
	ordered := func(f refFunnel, order string) refFunnel {
		f.Order = order
		return f
	}
	runStepsCases(t, []stepsCase{
		{name: "30 seconds", events: edge(30 * sc), f: win(30, "second"), hand: hand(30 * sc)},
		{name: "5 minutes", events: edge(5 * mi), f: win(5, "minute"), hand: hand(5 * mi)},
		{name: "1 hour", events: edge(h), f: win(1, "hour"), hand: hand(h)},
		{name: "1 hour, strict", events: edge(h), f: ordered(win(1, "hour"), "strict"), hand: hand(h)},
		{name: "1 hour, unordered", events: edge(h), f: ordered(win(1, "hour"), "unordered"), hand: hand(h)},
		{name: "2 days", events: edge(2 * dy), f: win(2, "day"), hand: hand(2 * dy)},
		{name: "1 week is 7 days", events: edge(7 * dy), f: win(1, "week"), hand: hand(7 * dy)},
		{name: "1 month is 30 days", events: edge(30 * dy), f: win(1, "month"), hand: hand(30 * dy)},
		{name: "the default is 14 days", events: edge(14 * dy), f: win(0, ""), hand: hand(14 * dy)},
		{name: "funnel_window_days overrides interval and unit", events: edge(dy), f: days(1), hand: hand(dy)},
		{name: "funnel_window_interval_type is a synonym, in any case", events: edge(2 * h), f: typeSynonym,
			extra: map[string]any{"funnel_window_interval_unit": nil, "funnel_window_interval_type": "HOUR"}, hand: hand(2 * h)},
	})
}

func TestFunnelExclusions(t *testing.T) {
	excl := func(f refFunnel, x ...refExclusion) refFunnel {
		f.Exclusions = x
		return f
	}
	runStepsCases(t, []stepsCase{
		{
			name: "an excluded event between steps 0 and 1 removes the person from the whole funnel",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "X", mi), fev("p1", "B", 2*mi), fev("p1", "C", 3*mi), // X inside: removed
				fev("p2", "A", 0), fev("p2", "B", mi), fev("p2", "X", 2*mi), fev("p2", "C", 3*mi), // X after step 1: kept
				fev("p3", "A", 0), fev("p3", "X", mi), // B never reached, X inside the window: removed
				fev("p4", "A", 0), fev("p4", "X", 2*dy), // X past the window: kept
				fev("p5", "X", 0), fev("p5", "A", mi), fev("p5", "B", 2*mi), // X before step 0: kept
			},
			f:    excl(funnelOf("", "A", "B", "C").hours(24), refExclusion{"X", 0, 1}),
			hand: []refStepResult{st(3), st(2, 60, 60), st(1, 120, 120)},
		},
		{
			name: "an exclusion from step 1 to step 2 looks only after the step-1 event",
			events: []refEvent{
				fev("q1", "A", 0), fev("q1", "X", mi), fev("q1", "B", 2*mi), fev("q1", "C", 3*mi), // kept
				fev("q2", "A", 0), fev("q2", "B", mi), fev("q2", "X", 2*mi), fev("q2", "C", 3*mi), // removed
				fev("q3", "A", 0), fev("q3", "B", mi), fev("q3", "X", 2*mi), // removed: C not reached, X in the window
				fev("q4", "A", 0), fev("q4", "X", mi), // kept: step 1 not reached
			},
			f:    excl(funnelOf("", "A", "B", "C").hours(24), refExclusion{"X", 1, 2}),
			hand: []refStepResult{st(2), st(1, 120, 120), st(1, 60, 60)},
		},
		{
			name: "a later step's event may be excluded between earlier steps",
			events: []refEvent{
				fev("r1", "A", 0), fev("r1", "C", mi), fev("r1", "B", 2*mi), fev("r1", "C", 3*mi), // removed
				fev("r2", "A", 0), fev("r2", "B", mi), fev("r2", "C", 2*mi), // kept
			},
			f:    excl(funnelOf("", "A", "B", "C"), refExclusion{"C", 0, 1}),
			hand: []refStepResult{st(1), st(1, 60, 60), st(1, 60, 60)},
		},
		{
			name: "unordered: exclusions look between the counted attempt's sorted step events",
			events: []refEvent{
				fev("u1", "B", 0), fev("u1", "X", mi), fev("u1", "A", 2*mi),
				fev("u2", "B", 0), fev("u2", "A", mi), fev("u2", "X", 2*mi),
			},
			f:    excl(funnelOf("unordered", "A", "B").hours(1), refExclusion{"X", 0, 1}),
			hand: []refStepResult{st(1), st(1, 60, 60)},
		},
		{
			name: "with the last step not reached, an excluded event exactly at the window's end counts, one microsecond past does not",
			events: []refEvent{
				fev("e1", "A", 0), fev("e1", "X", h), // removed
				fev("e2", "A", 0), fev("e2", "X", h+us), // kept
				fev("e3", "A", 0), fev("e3", "B", 30*mi), fev("e3", "X", 40*mi), // kept: X after step 1
			},
			f:    excl(funnelOf("", "A", "B").hours(1), refExclusion{"X", 0, 1}),
			hand: []refStepResult{st(2), st(1, 1800, 1800)},
		},
		{
			// uuids are unique in a project: ingestion keeps one event per uuid.
			name: "an excluded event at the same time as a step is between them only if the uuid order puts it there",
			events: []refEvent{
				fevID("t1", "X", 0, "10000000-0000-4000-8000-000000000001"), fevID("t1", "A", 0, "20000000-0000-4000-8000-000000000001"),
				fev("t1", "B", mi), // X sorts before A: kept
				fevID("t2", "A", 0, "10000000-0000-4000-8000-000000000002"), fevID("t2", "X", 0, "20000000-0000-4000-8000-000000000002"),
				fev("t2", "B", mi), // X sorts after A: removed
				fev("t3", "A", 0), fevID("t3", "B", mi, "10000000-0000-4000-8000-000000000003"),
				fevID("t3", "X", mi, "20000000-0000-4000-8000-000000000003"), // X sorts after B: kept
				fev("t4", "A", 0), fevID("t4", "X", mi, "10000000-0000-4000-8000-000000000004"),
				fevID("t4", "B", mi, "20000000-0000-4000-8000-000000000004"), // X sorts before B: removed
			},
			f:    excl(funnelOf("", "A", "B"), refExclusion{"X", 0, 1}),
			hand: []refStepResult{st(2), st(2, 60, 60)},
		},
	})
	t.Run("bad exclusions are a 400 naming exclusions", func(t *testing.T) {
		p := newFunnelEnv(t).project(t, []refEvent{fev("p", "A", 0)})
		for name, x := range map[string]refExclusion{
			"from equal to to":                   {"X", 1, 1},
			"from after to":                      {"X", 2, 1},
			"to beyond the last step":            {"X", 0, 3},
			"a negative from":                    {"X", -1, 1},
			"an event identical to a step in it": {"B", 0, 1},
		} {
			t.Run(name, func(t *testing.T) {
				p.wantInvalid(t, "funnel", excl(funnelOf("", "A", "B", "C"), x).filter(nil), "exclusions")
			})
		}
	})
}

func TestFunnelBreakdowns(t *testing.T) {
	events := []refEvent{
		fev("p1", "A", 0, "plan", "free"), fev("p1", "B", mi, "plan", "pro"), fev("p1", "C", 2*mi, "plan", "ent"),
		fev("p2", "A", 0, "plan", "free"), fev("p2", "B", mi, "plan", "free"),
		fev("p3", "A", 0, "plan", "pro"),
		fev("p4", "A", 0), fev("p4", "B", mi, "plan", "pro"),
	}
	tiers := map[string]string{"p1": "gold", "p2": "gold", "p3": "silver"}
	for _, e := range events {
		if tier, ok := tiers[e.DistinctID]; ok && e.Event == "A" {
			e.Props["$set"] = map[string]any{"tier": tier}
		}
	}
	by := func(attribution string, step, limit int) refFunnel {
		f := funnelOf("", "A", "B", "C")
		f.Breakdown, f.Attribution, f.AttributionStep, f.BreakdownLimit = "plan", attribution, step, limit
		return f
	}
	person := funnelOf("", "A", "B", "C")
	person.Breakdown, person.BreakdownType = "tier", "person"
	one, both := st(1, 60, 60), st(2, 60, 60)
	cases := []struct {
		name string
		f    refFunnel
		hand []refSeries
	}{
		{"first_touch (the default) takes the step-0 event's value; values rank by step-1 count, then by value", by("", 0, 0), []refSeries{
			{"free", []refStepResult{st(2), both, one}}, {refNull, []refStepResult{st(1), one, st(0)}}, {"pro", []refStepResult{st(1), st(0), st(0)}}}},
		{"last_touch takes the furthest step's event value", by("last_touch", 0, 0), []refSeries{
			{"pro", []refStepResult{st(2), one, st(0)}}, {"ent", []refStepResult{st(1), one, one}}, {"free", []refStepResult{st(1), one, st(0)}}}},
		{"step takes the given step's value, null when not reached", by("step", 1, 0), []refSeries{
			{"pro", []refStepResult{st(2), both, one}}, {refNull, []refStepResult{st(1), st(0), st(0)}}, {"free", []refStepResult{st(1), one, st(0)}}}},
		{"breakdown_limit folds the rest into other, last", by("first_touch", 0, 1), []refSeries{
			{"free", []refStepResult{st(2), both, one}}, {refOther, []refStepResult{st(2), one, st(0)}}}},
		{"a person breakdown takes the person's property", person, []refSeries{
			{"gold", []refStepResult{st(2), both, one}}, {refNull, []refStepResult{st(1), one, st(0)}}, {"silver", []refStepResult{st(1), st(0), st(0)}}}},
	}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkBreakdown(t, p, events, tc.f, tc.hand) })
	}
	// Two attempts starting at the same time reach the same level: the
	// counted one, and so the first_touch value, is the later by uuid.
	tied := []refEvent{
		fevID("t1", "A", 0, "10000000-0000-4000-8000-000000000000", "plan", "earlier"),
		fevID("t1", "A", 0, "20000000-0000-4000-8000-000000000000", "plan", "later"),
	}
	converted := append(append([]refEvent(nil), tied...), fev("t1", "B", mi))
	pTied, pConverted := env.project(t, tied), env.project(t, converted)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		f := funnelOf(order, "A", "B")
		f.Breakdown = "plan"
		t.Run(order+": first_touch of tied best attempts that reach step 1 is the later one's", func(t *testing.T) {
			checkBreakdown(t, pTied, tied, f, []refSeries{{"later", []refStepResult{st(1), st(0)}}})
		})
		t.Run(order+": first_touch of tied best attempts that reach step 2 is the later one's", func(t *testing.T) {
			checkBreakdown(t, pConverted, converted, f, []refSeries{{"later", []refStepResult{st(1), st(1, 60, 60)}}})
		})
	}
}

func TestFunnelPersonsMergedByIdentify(t *testing.T) {
	groups := funnelOf("", "A", "B")
	groups.GroupIndex = 1
	runStepsCases(t, []stepsCase{{
		name: "aggregation_group_type_index counts the events' $group_1 values, not persons",
		events: []refEvent{
			fev("u1", "A", 0, "$group_1", "acme"), fev("u2", "B", mi, "$group_1", "acme"),
			fev("u3", "A", 0, "$group_1", "beta"), fev("u3", "B", mi),
			fev("u4", "A", 0),
		},
		f:    groups,
		hand: []refStepResult{st(2), st(1, 60, 60)},
	}, {
		name: "anonymous events before (and after) $identify count for the identified person",
		events: []refEvent{
			fev("anon-1", "A", 0), fident("user-1", "anon-1", mi), fev("user-1", "B", 2*mi),
			fev("anon-2", "A", 0), fev("user-2", "B", mi), // never identified: two persons
			fev("anon-3", "A", 0), fident("user-3", "anon-3", mi), fev("anon-3", "B", 2*mi),
		},
		f:    funnelOf("", "A", "B"),
		hand: []refStepResult{st(3), st(2, 120, 120)},
	}})
}

// fourConverters convert from A to B in 10, 20, 40 and 100 seconds; a
// fifth only does A.
var fourConverters = []refEvent{
	fev("c1", "A", 0), fev("c1", "B", 10*sc),
	fev("c2", "A", 0), fev("c2", "B", 20*sc),
	fev("c3", "A", 0), fev("c3", "B", 40*sc),
	fev("c4", "A", 0), fev("c4", "B", 100*sc),
	fev("c5", "A", 0),
}

func TestFunnelConversionTimes(t *testing.T) {
	runStepsCases(t, []stepsCase{
		{name: "average and median over an even number of persons (the median interpolates)",
			events: fourConverters, f: funnelOf("", "A", "B"), hand: []refStepResult{st(5), st(4, 42.5, 30)}},
		{name: "times keep microseconds",
			events: []refEvent{fev("m1", "A", 0), fev("m1", "B", 1500*time.Millisecond), fev("m2", "A", 0), fev("m2", "B", 2*sc+us)},
			f:      funnelOf("", "A", "B"), hand: []refStepResult{st(2), st(2, 1.7500005, 1.7500005)}},
		{name: "nobody at a step gives null times",
			events: []refEvent{fev("n1", "A", 0)}, f: funnelOf("", "A", "B"), hand: []refStepResult{st(1), st(0)}},
	})
}

func TestFunnelTimeToConvert(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, fourConverters)
	ab := funnelOf("", "A", "B")
	t.Run("bin_count 3: lo 10, width 30, the last bin holds its upper end", func(t *testing.T) {
		checkTimeToConvert(t, p, fourConverters, ab, 3, [][2]float64{{10, 2}, {40, 1}, {70, 1}})
	})
	t.Run("the default bin count is the cube root of the persons, rounded up", func(t *testing.T) {
		checkTimeToConvert(t, p, fourConverters, ab, 0, [][2]float64{{10, 3}, {55, 1}})
	})
	t.Run("one bin holds everyone", func(t *testing.T) {
		checkTimeToConvert(t, p, fourConverters, ab, 1, [][2]float64{{10, 4}})
	})
	t.Run("fractional times: lo is floored, width at least 1", func(t *testing.T) {
		events := []refEvent{fev("f1", "A", 0), fev("f1", "B", 500*time.Millisecond), fev("f2", "A", 0), fev("f2", "B", 3250*time.Millisecond)}
		checkTimeToConvert(t, env.project(t, events), events, ab, 2, [][2]float64{{0, 1}, {2, 1}})
	})
	t.Run("between funnel_from_step and funnel_to_step", func(t *testing.T) {
		events := []refEvent{
			fev("s1", "A", 0), fev("s1", "B", 10*sc), fev("s1", "C", 70*sc),
			fev("s2", "A", 0), fev("s2", "B", 100*sc), fev("s2", "C", 105*sc),
			fev("s3", "A", 0), fev("s3", "B", 5*sc),
		}
		f := funnelOf("", "A", "B", "C")
		f.FromStep, f.ToStep = 1, 2
		checkTimeToConvert(t, env.project(t, events), events, f, 2, [][2]float64{{5, 1}, {33, 1}})
		f.FromStep, f.ToStep = 0, 1
		checkTimeToConvert(t, env.project(t, events), events, f, 0, [][2]float64{{5, 2}, {53, 1}})
	})
	t.Run("nobody converting gives no bins and a null average", func(t *testing.T) {
		events := []refEvent{fev("z", "A", 0)}
		checkTimeToConvert(t, env.project(t, events), events, ab, 0, [][2]float64{})
	})
}

func TestFunnelTimingEndpoint(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, fourConverters)
	f := funnelOf("", "A", "B")
	ts := f.conversionTimes(fourConverters)
	if q := [3]float64{refQuantile(ts, 0.5), refQuantile(ts, 0.9), refQuantile(ts, 0.99)}; !sameFloats(q[:], []float64{30, 82, 98.2}) {
		t.Errorf("the reference quantiles %v disagree with the hand-written [30 82 98.2]", q)
	}
	var got timing
	p.result(t, "timing", f.filter(nil), &got)
	want := refBins(ts, 0)
	if !sameBins(got.Bins, want) || !samePtr(got.Avg, ptr(42.5)) || !samePtr(got.Median, ptr(30)) ||
		!samePtr(got.P90, ptr(82)) || !samePtr(got.P99, ptr(98.2)) || !samePtr(got.Persons, ptr(4)) {
		t.Errorf("timing: bins %v avg %s median %s p90 %s p99 %s persons %s\nwant bins %v avg 42.5 median 30 p90 82 p99 98.2 persons 4",
			got.Bins, fmtPtr(got.Avg), fmtPtr(got.Median), fmtPtr(got.P90), fmtPtr(got.P99), fmtPtr(got.Persons), want)
	}
	t.Run("with bin_count and steps 1 to 2", func(t *testing.T) {
		events := []refEvent{
			fev("s1", "A", 0), fev("s1", "B", 10*sc), fev("s1", "C", 70*sc),
			fev("s2", "A", 0), fev("s2", "B", 100*sc), fev("s2", "C", 105*sc),
		}
		f := funnelOf("", "A", "B", "C")
		f.FromStep, f.ToStep = 1, 2
		ts := f.conversionTimes(events)
		filter := f.filter(map[string]any{"bin_count": 2})
		var got timing
		env.project(t, events).result(t, "timing", filter, &got)
		if !sameBins(got.Bins, [][2]float64{{5, 1}, {33, 1}}) || !samePtr(got.Median, ptr(refQuantile(ts, 0.5))) ||
			!samePtr(got.P99, ptr(refQuantile(ts, 0.99))) || !samePtr(got.Persons, ptr(2)) {
			t.Errorf("timing %+v median %s p99 %s persons %s", got.Bins, fmtPtr(got.Median), fmtPtr(got.P99), fmtPtr(got.Persons))
		}
	})
}

func TestFunnelTrends(t *testing.T) {
	events := []refEvent{
		fev("p1", "A", -12*h-30*mi), fev("p1", "B", -11*h-30*mi), // 2 Mar 23:30 -> 3 Mar 00:30
		fev("p2", "A", -26*h),
		fev("p3", "A", -3*h), fev("p3", "B", -2*h),
		fev("p4", "A", 21*h),
		fev("p5", "A", -28*h), fev("p5", "A", 20*h), fev("p5", "B", 21*h),
	}
	f := funnelOf("", "A", "B").hours(24)
	f.DateFrom, f.DateTo = "2026-03-02", "2026-03-05"
	p := newFunnelEnv(t).project(t, events)
	t.Run("rates per entry day; an attempt converting after its day counts on its entry day", func(t *testing.T) {
		checkTrends(t, p, events, f, []float64{100.0 / 3, 100, 50, 0})
	})
	t.Run("entry days are the project's timezone's days", func(t *testing.T) {
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		// n1 enters at 22:00 on 2 March in New York (03:00 on the 3rd in UTC).
		events := []refEvent{fev("n1", "A", -9*h), fev("n1", "B", -8*h), fev("n2", "A", h)}
		p := newFunnelEnv(t).project(t, events)
		if st, out := call(t, p.env.h, "PATCH", fmt.Sprintf("/api/organizations/%s/projects/%d/", p.org, p.id), p.key,
			map[string]any{"timezone": "America/New_York"}); st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		f := funnelOf("", "A", "B").hours(24)
		f.DateFrom, f.DateTo, f.Loc = "2026-03-02", "2026-03-04", ny
		checkTrends(t, p, events, f, []float64{100, 0, 0})
	})
}

func TestFunnelStepLimits(t *testing.T) {
	var names []string
	var events []refEvent
	for i := range 20 {
		names = append(names, fmt.Sprintf("step %02d", i+1))
		events = append(events, fev("all", names[i], time.Duration(i)*mi))
		if i < 12 {
			events = append(events, fev("twelve", names[i], time.Duration(i)*mi))
		}
	}
	var hand []refStepResult
	for i := range 20 {
		switch {
		case i == 0:
			hand = append(hand, st(2))
		case i < 12:
			hand = append(hand, st(2, 60, 60))
		default:
			hand = append(hand, st(1, 60, 60))
		}
	}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		t.Run("20 steps, "+order, func(t *testing.T) { checkSteps(t, p, events, funnelOf(order, names...), nil, hand) })
	}
	// The same event twenty times: twenty distinct events in every order type.
	var repeated []refEvent
	for i := range 20 {
		repeated = append(repeated, fev("all", "A", time.Duration(i)*mi))
		if i < 12 {
			repeated = append(repeated, fev("twelve", "A", time.Duration(i)*mi))
		}
	}
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = "A"
	}
	pRepeated := env.project(t, repeated)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		t.Run("the same step 20 times, "+order, func(t *testing.T) {
			checkSteps(t, pRepeated, repeated, funnelOf(order, twenty...), nil, hand)
		})
	}
	t.Run("21 steps are a 400 naming events", func(t *testing.T) {
		p.wantInvalid(t, "funnel", funnelOf("", append(names, "one more")...).filter(nil), "events")
	})
	t.Run("1 step is a 400 naming events", func(t *testing.T) {
		p.wantInvalid(t, "funnel", funnelOf("", "step 01").filter(nil), "events")
	})
	t.Run("no steps is a 400 naming events", func(t *testing.T) {
		p.wantInvalid(t, "funnel", funnelOf("").filter(map[string]any{"events": []any{}}), "events")
	})
	t.Run("the timing endpoint has the same limits", func(t *testing.T) {
		p.wantInvalid(t, "timing", funnelOf("", append(names, "one more")...).filter(nil), "events")
		p.wantInvalid(t, "timing", funnelOf("", "step 01").filter(nil), "events")
	})
}

func TestFunnelGETAndPOSTAgree(t *testing.T) {
	events := []refEvent{
		fev("p1", "A", 0, "plan", "free"), fev("p1", "B", h), fev("p1", "C", 3*h),
		fev("p2", "A", 0, "plan", "pro"), fev("p2", "C", h), fev("p2", "B", 2*h),
		fev("p3", "B", 0), fev("p3", "X", 10*mi), fev("p3", "A", h),
	}
	p := newFunnelEnv(t).project(t, events)
	bd := funnelOf("strict", "A", "B", "C").hours(4)
	bd.Breakdown, bd.Exclusions = "plan", []refExclusion{{"X", 0, 1}}
	for name, filter := range map[string]map[string]any{
		"steps":           funnelOf("", "A", "B", "C").filter(nil),
		"breakdown":       bd.filter(nil),
		"trends":          funnelOf("", "A", "B").filter(map[string]any{"funnel_viz_type": "trends"}),
		"time_to_convert": funnelOf("", "A", "B").filter(map[string]any{"funnel_viz_type": "time_to_convert", "bin_count": 2}),
	} {
		t.Run(name, func(t *testing.T) {
			pc, post := p.ask(t, "POST", "funnel", filter)
			gc, get := p.ask(t, "GET", "funnel", filter)
			if pc != 200 || gc != 200 || string(post["result"]) != string(get["result"]) {
				t.Fatalf("POST %d %s\nGET  %d %s", pc, post["result"], gc, mustJSON(t, get))
			}
			for _, k := range []string{"result", "is_cached", "last_refresh", "timezone"} {
				if _, ok := post[k]; !ok {
					t.Errorf("the envelope lacks %s: %s", k, mustJSON(t, post))
				}
			}
		})
	}
	t.Run("timing", func(t *testing.T) {
		filter := funnelOf("", "A", "B").filter(nil)
		pc, post := p.ask(t, "POST", "timing", filter)
		gc, get := p.ask(t, "GET", "timing", filter)
		if pc != 200 || gc != 200 || string(post["result"]) != string(get["result"]) {
			t.Fatalf("POST %d %s\nGET  %d %s", pc, post["result"], gc, mustJSON(t, get))
		}
	})
	t.Run("the filter may sit under filters", func(t *testing.T) {
		filter := funnelOf("", "A", "B", "C").filter(nil)
		_, top := p.ask(t, "POST", "funnel", filter)
		_, under := p.ask(t, "POST", "funnel", map[string]any{"filters": filter})
		if string(top["result"]) != string(under["result"]) {
			t.Fatalf("top level %s\nunder filters %s", top["result"], under["result"])
		}
	})
}

func TestFunnelHostileStringsAreData(t *testing.T) {
	first, second := `'; DROP TABLE events; --`, `quote"d \ back\slash`
	key, val := `{p0:String}'"`, `ünïcödé 🦔 \N`
	bkey := `it's "the" \plan`
	events := []refEvent{
		fev("h1", first, 0, bkey, `O'Brien`, `'); DROP`, "--"), fev("h1", second, mi, key, val, `'); DROP`, "--"),
		fev("h2", first, 0, bkey, "tab\there"), fev("h2", second, mi, key, "other"),
		fev("h3", first, 0, bkey, `O'Brien`), fev("h3", second, 2*mi, key, val),
		fev("h4", first, 0),
	}
	f := funnelOf("", first, second)
	f.Steps[1].Props = map[string]string{key: val}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	t.Run("in event names and step properties", func(t *testing.T) {
		checkSteps(t, p, events, f, nil, []refStepResult{st(4), st(2, 90, 90)})
	})
	t.Run("in a breakdown key and its values", func(t *testing.T) {
		b := f
		b.Breakdown = bkey
		checkBreakdown(t, p, events, b, []refSeries{
			{`O'Brien`, []refStepResult{st(2), st(2, 90, 90)}}, {refNull, []refStepResult{st(1), st(0)}}, {"tab\there", []refStepResult{st(1), st(0)}}})
	})
	t.Run("in exclusions and global properties", func(t *testing.T) {
		x := f
		x.Exclusions = []refExclusion{{`\'; --`, 0, 1}}
		x.Properties = map[string]string{`'); DROP`: `--`}
		checkSteps(t, p, events, x, nil, []refStepResult{st(1), st(1, 60, 60)})
	})
	// A NUL is data too (querybuilder/README.md: it matches nothing and is
	// not refused, as in trends): no event here holds one.
	t.Run("a NUL in an event name matches nothing", func(t *testing.T) {
		checkSteps(t, p, events, funnelOf("", first, second+"\x00"), nil, []refStepResult{st(4), st(0)})
	})
	t.Run("a NUL in a property value matches nothing", func(t *testing.T) {
		n := funnelOf("", first, second)
		n.Steps[1].Props = map[string]string{key: val + "\x00"}
		checkSteps(t, p, events, n, nil, []refStepResult{st(4), st(0)})
	})
	t.Run("a NUL in a breakdown key is a key no event has", func(t *testing.T) {
		n := f
		n.Breakdown = bkey + "\x00"
		checkBreakdown(t, p, events, n, []refSeries{{refNull, []refStepResult{st(4), st(2, 90, 90)}}})
	})
}

// randomEvents are seeded random events of 30 persons over two days,
// with many events at the same time, some persons starting anonymous and
// identifying part way.
func randomEvents(seed int64) []refEvent {
	r := rand.New(rand.NewSource(seed))
	// uuids from the seed too, so that a run's ties are the next run's.
	id := func() string { return uuid.Must(uuid.NewRandomFromReader(r)).String() }
	var out []refEvent
	for i := range 30 {
		user := fmt.Sprintf("s%d-user-%d", seed, i)
		anon := ""
		if r.Intn(3) == 0 {
			anon = user + "-anon"
		}
		n := 1 + r.Intn(10)
		at := fday.Add(-12 * h)
		for k := range n {
			if k == 0 || r.Intn(4) != 0 { // else the same time as the previous event
				at = fday.Add(-12*h + time.Duration(r.Intn(100))*20*mi)
			}
			who := user
			if anon != "" && k < n/2 {
				who = anon
			}
			if anon != "" && k == n/2 {
				out = append(out, refEvent{UUID: id(), DistinctID: user, Event: "$identify", At: at,
					Props: map[string]any{"$anon_distinct_id": anon}})
			}
			props := map[string]any{}
			if v := []string{"free", "pro", "", "ent"}[r.Intn(4)]; v != "" {
				props["plan"] = v
			}
			out = append(out, refEvent{UUID: id(), DistinctID: who,
				Event: []string{"A", "B", "C", "X", "A", "B", "C"}[r.Intn(7)], At: at, Props: props})
		}
	}
	return out
}

// TestFunnelMatchesTheReferenceOnRandomEvents compares every order type,
// window, exclusion, breakdown attribution and visualisation with the
// reference on random events (with ties, repeats and merged persons).
func TestFunnelMatchesTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	for _, seed := range []int64{1, 2, 3} {
		events := randomEvents(seed)
		p := env.project(t, events)
		for _, order := range []string{"ordered", "strict", "unordered"} {
			for _, steps := range [][]string{{"A", "B", "C"}, {"A", "A", "B"}, {"B", "A"}} {
				for _, hours := range []int{1, 6} {
					f := funnelOf(order, steps...).hours(hours)
					t.Run(fmt.Sprintf("seed %d %s %v within %dh", seed, order, steps, hours), func(t *testing.T) {
						checkSteps(t, p, events, f, nil, nil)
					})
				}
			}
			narrow := funnelOf(order, "A", "B", "C").hours(6)
			narrow.Steps[1].Props = map[string]string{"plan": "pro"}
			anyNext := funnelOf(order, "A", "B").hours(2)
			anyNext.Steps[1] = refStep{Any: true}
			global := funnelOf(order, "A", "B").hours(6)
			global.Properties = map[string]string{"plan": "pro"}
			for name, f := range map[string]refFunnel{"a step with properties": narrow, "a step of any event": anyNext, "global properties": global} {
				t.Run(fmt.Sprintf("seed %d %s %s", seed, order, name), func(t *testing.T) {
					checkSteps(t, p, events, f, nil, nil)
				})
			}
			base := funnelOf(order, "A", "B", "C").hours(6)
			for _, x := range []refExclusion{{"X", 0, 1}, {"X", 1, 2}, {"X", 0, 2}} {
				f := base
				f.Exclusions = []refExclusion{x}
				t.Run(fmt.Sprintf("seed %d %s excluding X from %d to %d", seed, order, x.From, x.To), func(t *testing.T) {
					checkSteps(t, p, events, f, nil, nil)
				})
			}
			for _, a := range []struct {
				attribution string
				step, limit int
			}{{"first_touch", 0, 0}, {"last_touch", 0, 0}, {"step", 1, 0}, {"step", 2, 0}, {"first_touch", 0, 2}} {
				f := base
				f.Breakdown, f.Attribution, f.AttributionStep, f.BreakdownLimit = "plan", a.attribution, a.step, a.limit
				t.Run(fmt.Sprintf("seed %d %s breakdown %s %d limit %d", seed, order, a.attribution, a.step, a.limit), func(t *testing.T) {
					checkBreakdown(t, p, events, f, nil)
				})
			}
			t.Run(fmt.Sprintf("seed %d %s time to convert", seed, order), func(t *testing.T) {
				checkTimeToConvert(t, p, events, base, 0, nil)
				f := base
				f.FromStep, f.ToStep = 1, 2
				checkTimeToConvert(t, p, events, f, 4, nil)
				f.Exclusions = []refExclusion{{"X", 0, 1}}
				checkTimeToConvert(t, p, events, f, 3, nil)
			})
			t.Run(fmt.Sprintf("seed %d %s timing", seed, order), func(t *testing.T) {
				checkTiming(t, p, events, base, 0)
			})
			t.Run(fmt.Sprintf("seed %d %s breakdown with an exclusion", seed, order), func(t *testing.T) {
				f := base
				f.Breakdown, f.Attribution, f.Exclusions = "plan", "last_touch", []refExclusion{{"X", 1, 2}}
				checkBreakdown(t, p, events, f, nil)
			})
			t.Run(fmt.Sprintf("seed %d %s on 3 March only", seed, order), func(t *testing.T) {
				f := base
				f.DateFrom, f.DateTo = "2026-03-03", "2026-03-03"
				checkSteps(t, p, events, f, nil, nil)
			})
		}
		for _, order := range []string{"ordered", "strict", "unordered"} {
			f := funnelOf(order, "A", "B").hours(6)
			f.DateFrom, f.DateTo = "2026-03-02", "2026-03-05"
			t.Run(fmt.Sprintf("seed %d %s trends", seed, order), func(t *testing.T) { checkTrends(t, p, events, f, nil) })
			g := funnelOf(order, "A", "B", "C").hours(6)
			g.DateFrom, g.DateTo, g.FromStep, g.ToStep = "2026-03-02", "2026-03-05", 1, 2
			t.Run(fmt.Sprintf("seed %d %s trends from step 1 to 2", seed, order), func(t *testing.T) { checkTrends(t, p, events, g, nil) })
			x := funnelOf(order, "A", "B", "C").hours(6)
			x.DateFrom, x.DateTo, x.Exclusions = "2026-03-02", "2026-03-05", []refExclusion{{"X", 0, 1}}
			t.Run(fmt.Sprintf("seed %d %s trends with an exclusion", seed, order), func(t *testing.T) { checkTrends(t, p, events, x, nil) })
		}
	}
}
