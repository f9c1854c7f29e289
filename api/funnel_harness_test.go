package api

// The funnel tests' harness: events and funnels written compactly, a
// project per case fed through /batch/, and comparisons of the server's
// answers with the reference (funnel_reference_test.go) and by hand.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
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
		if s.Optional {
			e["optionalInFunnel"] = true
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
	return &funnelEnv{s: s, h: validated(t, s.Handler())}
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
	Order          *string  `json:"order"`
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
		if s.Order == nil || *s.Order != strconv.Itoa(i) || s.Type != "events" || s.People == nil {
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
