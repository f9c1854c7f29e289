package api

// Actions in analyses, against numbers worked out by hand from the
// events below: each step kind (event, URL contains / exact / regex,
// properties, element rules and selectors on posthog-js elements, as the
// list and as the chain), in trends, funnels, retention and stickiness.

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/reference"
)

// jsElements is an autocapture click as posthog-js sends it ($elements,
// the clicked element first): the sign-up button in the sign-up form.
var jsSignupClick = []any{
	map[string]any{"tag_name": "button", "$el_text": "Sign up", "classes": []any{"btn", "btn-primary"}, "attr__class": "btn btn-primary",
		"attr__type": "submit", "nth_child": 2, "nth_of_type": 1},
	map[string]any{"tag_name": "form", "classes": []any{"signup-form"}, "attr__class": "signup-form", "attr__id": "signup", "nth_child": 1, "nth_of_type": 1},
	map[string]any{"tag_name": "div", "classes": []any{"container"}, "attr__class": "container", "nth_child": 1, "nth_of_type": 1},
	map[string]any{"tag_name": "body", "nth_child": 2, "nth_of_type": 1},
}

// jsPricingChain is a click on the pricing link as newer posthog-js
// sends it: $elements_chain, already text.
const jsPricingChain = `a.nav-link:attr__class="nav-link"attr__href="/pricing"href="/pricing"nth-child="3"nth-of-type="1"text="Pricing \"new\"";nav.navbar:attr__class="navbar"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"`

var actT0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

func act(who, name string, day int, minute int, props map[string]any) reference.Event {
	if props == nil {
		props = map[string]any{}
	}
	return reference.Event{UUID: uuid.NewString(), DistinctID: who, Event: name, At: actT0.AddDate(0, 0, day).Add(time.Duration(minute) * time.Minute), Props: props}
}

func TestActionsInAnalysesWorkedByHand(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := []reference.Event{
		// u1: lands on /welcome (day 0), clicks the sign-up button, signs up.
		act("u1", "$pageview", 0, 0, map[string]any{"$current_url": "https://shop.test/welcome?ref=ad"}),
		act("u1", "$autocapture", 0, 1, map[string]any{"$event_type": "click", "$elements": jsSignupClick}),
		act("u1", "signup", 0, 2, map[string]any{"plan": "pro"}),
		// u2: pricing page (exact URL), clicks the pricing link (chain), day 1.
		act("u2", "$pageview", 1, 0, map[string]any{"$current_url": "https://shop.test/pricing"}),
		act("u2", "$autocapture", 1, 1, map[string]any{"$event_type": "click", "$elements_chain": jsPricingChain}),
		// u3: signs up (free) on day 1 and comes back to /welcome on day 2.
		act("u3", "signup", 1, 5, map[string]any{"plan": "free"}),
		act("u3", "$pageview", 2, 0, map[string]any{"$current_url": "https://shop.test/welcome"}),
		// u4: a pageview of /pricing/ (not exactly /pricing), day 2.
		act("u4", "$pageview", 2, 3, map[string]any{"$current_url": "https://shop.test/pricing/"}),
	}
	p := env.project(t, events)
	base := fmt.Sprintf("/api/projects/%d/actions/", p.id)
	action := func(name string, steps ...map[string]any) int64 {
		list := make([]any, len(steps))
		for i, s := range steps {
			list[i] = s
		}
		st, out := call(t, env.h, "POST", base, p.key, map[string]any{"name": name, "steps": list})
		if st != http.StatusCreated {
			t.Fatalf("create %s: %d %v", name, st, out)
		}
		return int64(out["id"].(float64))
	}
	signedUp := action("Signed up", map[string]any{"event": "signup"},
		map[string]any{"event": "$pageview", "url": "/welcome", "url_matching": "contains"})
	proSignup := action("Pro sign-up", map[string]any{"event": "signup", "properties": []any{map[string]any{"key": "plan", "value": "pro"}}})
	button := action("Sign-up button", map[string]any{"event": "$autocapture", "tag_name": "button", "text": "Sign up"})
	formButton := action("Form button", map[string]any{"event": "$autocapture", "selector": "form#signup > button.btn-primary"})
	deepButton := action("Body button", map[string]any{"event": "$autocapture", "selector": "body button"})
	wrongOrder := action("Button body", map[string]any{"event": "$autocapture", "selector": "button body"})
	pricingLink := action("Pricing link", map[string]any{"event": "$autocapture", "href": "/pric", "href_matching": "contains", "text": `Pricing "new"`})
	navLink := action("Nav link", map[string]any{"event": "$autocapture", "selector": `nav.navbar a[href="/pricing"]`})
	exactPricing := action("Pricing exactly", map[string]any{"event": "$pageview", "url": "https://shop.test/pricing", "url_matching": "exact"})
	regexPricing := action("Pricing regex", map[string]any{"event": "$pageview", "url": `^https://shop\.test/pric`, "url_matching": "regex"})
	anyClick := action("Any click", map[string]any{"event": "$autocapture"}, map[string]any{"event": "signup"})

	trend := func(id int64, math string) float64 {
		var got []struct{ Count float64 }
		p.result(t, "trend", map[string]any{"actions": []any{map[string]any{"id": id, "type": "actions", "math": math}},
			"date_from": "2026-06-01", "date_to": "2026-06-03"}, &got)
		if len(got) != 1 {
			t.Fatalf("action %d: %d series", id, len(got))
		}
		return got[0].Count
	}
	for _, tc := range []struct {
		name         string
		id           int64
		total, users float64
	}{
		{"signup or a /welcome pageview", signedUp, 4, 3}, // u1 day 0; u3 days 1 and 2 (daily users, summed)
		{"a step's property", proSignup, 1, 1},
		{"tag name and text of one element (list)", button, 1, 1},
		{"a selector with an id and a child combinator", formButton, 1, 1},
		{"a descendant selector", deepButton, 1, 1},
		{"a selector in the wrong order", wrongOrder, 0, 0},
		{"href contains and text with quotes (chain)", pricingLink, 1, 1},
		{"a selector with an attribute (chain)", navLink, 1, 1},
		{"URL exact", exactPricing, 1, 1},
		{"URL regex", regexPricing, 2, 2},
		{"any step", anyClick, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := trend(tc.id, "total"); got != tc.total {
				t.Fatalf("total %v, want %v", got, tc.total)
			}
			if got := trend(tc.id, "dau"); got != tc.users {
				t.Fatalf("users %v, want %v", got, tc.users)
			}
		})
	}
	t.Run("a series is labelled with the action's name and answers its id", func(t *testing.T) {
		var got []struct {
			Label  string
			Action map[string]any
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": proSignup, "type": "actions"}}}, &got)
		if len(got) != 1 || got[0].Label != "Pro sign-up" || got[0].Action["id"] != float64(proSignup) || got[0].Action["type"] != "actions" {
			t.Fatalf("%+v", got)
		}
		// The name a client sends is the one it last saw: the label is the
		// action's own, as it is now; custom_name still wins.
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": proSignup, "type": "actions", "name": "Old name"},
			map[string]any{"id": proSignup, "type": "actions", "name": "Old name", "custom_name": "Mine"}}}, &got)
		if len(got) != 2 || got[0].Label != "Pro sign-up" || got[1].Label != "Mine" {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("a funnel of actions: signed up, then clicked anything", func(t *testing.T) {
		var got []struct{ Count int }
		p.result(t, "funnel", map[string]any{"actions": []any{map[string]any{"id": signedUp, "order": 0}, map[string]any{"id": button, "order": 1}},
			"date_from": "2026-06-01", "date_to": "2026-06-03"}, &got)
		// u1's /welcome pageview, then the button; u3 signed up, no click.
		if len(got) != 2 || got[0].Count != 2 || got[1].Count != 1 {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("an event step then an action step, with an action exclusion", func(t *testing.T) {
		var got []struct{ Count int }
		p.result(t, "funnel", map[string]any{"events": []any{map[string]any{"id": "$pageview", "order": 0}},
			"actions": []any{map[string]any{"id": anyClick, "order": 1}}, "date_from": "2026-06-01", "date_to": "2026-06-03",
			"exclusions": []any{map[string]any{"id": proSignup, "type": "actions", "funnel_from_step": 0, "funnel_to_step": 1}}}, &got)
		// A pageview, then a click or a signup: u1 (its pro sign-up comes
		// after the click, so it excludes nothing) and u2; u3 and u4
		// have nothing after their pageview.
		if len(got) != 2 || got[0].Count != 4 || got[1].Count != 2 {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("retention of an action", func(t *testing.T) {
		var got []struct {
			Values []struct{ Count int }
		}
		p.result(t, "retention", map[string]any{"target_entity": map[string]any{"id": signedUp, "type": "actions"},
			"returning_entity": map[string]any{"id": signedUp, "type": "actions"}, "total_intervals": 3, "date_to": "2026-06-03"}, &got)
		// Day 0: u1 (never back). Day 1: u3, back on day 2.
		if len(got) != 3 || got[0].Values[0].Count != 1 || got[0].Values[1].Count != 0 ||
			got[1].Values[0].Count != 1 || got[1].Values[1].Count != 1 {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("stickiness of an action", func(t *testing.T) {
		var got []struct{ Data []float64 }
		p.result(t, "trend", map[string]any{"insight": "STICKINESS", "actions": []any{map[string]any{"id": signedUp}},
			"date_from": "2026-06-01", "date_to": "2026-06-03"}, &got)
		// u1 on 1 day; u3 on 2 days (signup day 1, pageview day 2).
		if len(got) != 1 || got[0].Data[0] != 1 || got[0].Data[1] != 1 || got[0].Data[2] != 0 {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("changing an action changes the answer at once (the cache is keyed by it)", func(t *testing.T) {
		before := trend(exactPricing, "total")
		st, _ := call(t, env.h, "PATCH", fmt.Sprintf("%s%d/", base, exactPricing), p.key,
			map[string]any{"steps": []any{map[string]any{"event": "$pageview", "url": "pricing", "url_matching": "contains"}}})
		if st != 200 {
			t.Fatalf("patch: %d", st)
		}
		if after := trend(exactPricing, "total"); before != 1 || after != 2 {
			t.Fatalf("before %v, after %v; want 1 then 2", before, after)
		}
	})
}
