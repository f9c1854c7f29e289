package api

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// hogqlEvent is what the Go reference reads of an event: its event
// properties and its person's plan (as the person is now).
type hogqlEvent struct {
	props map[string]any
	plan  any
}

// text is a property as an expression reads it: a string as is, a
// number as its JSON text; nil when missing or empty (NULL).
func (e hogqlEvent) text(key string) *string {
	v, ok := e.props[key]
	if !ok {
		return nil
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	}
	if s == "" {
		return nil
	}
	return &s
}

// number is toFloat of a property: nil unless it reads as a number.
func (e hogqlEvent) number(key string) *float64 {
	s := e.text(key)
	if s == nil {
		return nil
	}
	f, err := strconv.ParseFloat(*s, 64)
	if err != nil {
		return nil
	}
	return &f
}

func str(s string) *string { return &s }

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func lowerOf(s *string) *string {
	if s == nil {
		return nil
	}
	return str(strings.ToLower(*s))
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// TestExpressionBreakdownsAgainstGo: a trend broken down by each allowed
// form of expression on random events, against the same expression
// evaluated in Go.
func TestExpressionBreakdownsAgainstGo(t *testing.T) {
	env := newFunnelEnv(t)
	rng := rand.New(rand.NewSource(20))
	browsers := []any{"Chrome", "Safari", "Firefox", nil, ""}
	sources := []any{"Google", "google", "BING", "Bing", nil}
	prices := []any{12.3, 7.8, 150.2, 3.0, 10.0, 99.9, "n/a", nil}
	plans := map[string]any{"u0": "pro", "u1": "free", "u2": "pro", "u3": nil, "u4": "team", "u5": nil}
	var events []reference.Event
	var ref []hogqlEvent
	for i := 0; i < 120; i++ {
		who := fmt.Sprintf("u%d", rng.Intn(len(plans)))
		props := map[string]any{}
		for key, choices := range map[string][]any{"$browser": browsers, "utm_source": sources, "price": prices} {
			if v := choices[rng.Intn(len(choices))]; v != nil {
				props[key] = v
			}
		}
		ref = append(ref, hogqlEvent{props: props, plan: plans[who]})
		sent := map[string]any{}
		for k, v := range props {
			sent[k] = v
		}
		if plans[who] != nil {
			sent["$set"] = map[string]any{"plan": plans[who]}
		}
		events = append(events, reference.Event{UUID: uuid.NewString(), DistinctID: who, Event: "$pageview",
			At: analysistest.Fday.Add(analysistest.Mar(2, rng.Intn(24)) + time.Duration(rng.Intn(60))*time.Minute), Props: sent})
	}
	// An event of another kind and one outside the range count in no series.
	events = append(events, analysistest.Fev("u0", "signup", analysistest.Mar(2, 5), "$browser", "Chrome"), analysistest.Fev("u0", "$pageview", analysistest.Mar(4, 5), "$browser", "Chrome"))
	p := env.project(t, events)

	for _, tc := range []struct {
		name, expr string
		eval       func(e hogqlEvent) *string
	}{
		{"a property", "properties.$browser", func(e hogqlEvent) *string { return e.text("$browser") }},
		{"lower of a property", "lower(properties.utm_source)", func(e hogqlEvent) *string { return lowerOf(e.text("utm_source")) }},
		{"concat reads a missing property as empty", "concat(properties.$browser, ' / ', lower(properties.utm_source))",
			func(e hogqlEvent) *string {
				return str(orEmpty(e.text("$browser")) + " / " + orEmpty(lowerOf(e.text("utm_source"))))
			}},
		{"if on a number", "if(properties.price > 10, 'big', 'small')", func(e hogqlEvent) *string {
			if n := e.number("price"); n != nil && *n > 10 {
				return str("big")
			}
			return str("small")
		}},
		{"multiIf", "multiIf(properties.price >= 100, 'huge', properties.price > 10, 'big', properties.price IS NULL, 'none', 'small')",
			func(e hogqlEvent) *string {
				n := e.text("price")
				f := e.number("price")
				switch {
				case f != nil && *f >= 100:
					return str("huge")
				case f != nil && *f > 10:
					return str("big")
				case n == nil:
					return str("none")
				}
				return str("small")
			}},
		{"toString of round of a number", "toString(round(toFloat(properties.price)))", func(e hogqlEvent) *string {
			if f := e.number("price"); f != nil {
				return str(fmtFloat(math.RoundToEven(*f)))
			}
			return nil
		}},
		{"a person property", "person.properties.plan", func(e hogqlEvent) *string {
			if e.plan == nil {
				return nil
			}
			return str(e.plan.(string))
		}},
		{"coalesce of a person property", "coalesce(upper(person.properties.plan), 'NO PLAN')", func(e hogqlEvent) *string {
			if e.plan == nil {
				return str("NO PLAN")
			}
			return str(strings.ToUpper(e.plan.(string)))
		}},
		{"arithmetic", "toFloat(properties.price) * 2 + 1", func(e hogqlEvent) *string {
			if f := e.number("price"); f != nil {
				return str(fmtFloat(*f*2 + 1))
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]float64{}
			for _, e := range ref {
				v := tc.eval(e)
				if v == nil || *v == "" {
					v = str(reference.Null)
				}
				want[*v]++
			}
			body := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-02", "date_to": "2026-03-02",
				"display": "ActionsTable", "breakdown_type": "hogql", "breakdown": tc.expr}
			var series []struct {
				BreakdownValue string   `json:"breakdown_value"`
				Value          *float64 `json:"aggregated_value"`
			}
			p.result(t, "trend", body, &series)
			got := map[string]float64{}
			for _, s := range series {
				got[s.BreakdownValue] = *s.Value
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s\n got %v\nwant %v", tc.expr, got, want)
			}
		})
	}

	t.Run("an expression outside the subset is a 400 naming breakdown", func(t *testing.T) {
		for _, expr := range []string{"file('/etc/passwd')", "toStartOfDay(timestamp)", "properties.x; SELECT 1",
			strings.Repeat("lower(", 100) + "event" + strings.Repeat(")", 100), "(SELECT name FROM system.tables)",
			"properties.price + properties.tax", "if(properties.$browser, 'a', 'b')"} {
			p.wantInvalid(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}},
				"breakdown_type": "hogql", "breakdown": expr}, "breakdown")
		}
	})
}
