package analysistest

import (
	"fmt"
	"math/rand"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/reference"
)

// Seeded random and hand-written event sets shared by the kinds' tests.

// Mar is the offset from Fday of a UTC hour in March 2026 (February
// for day 0 and below).
func Mar(day, hour int) time.Duration {
	return time.Date(2026, 3, day, hour, 0, 0, 0, time.UTC).Sub(Fday)
}

var CorrT0 = time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)

// CorrelationEvents are seeded random events of 60 persons over 3 days:
// the steps A, B, C, other events, event and person properties, merges
// and group keys.
func CorrelationEvents(seed int64) []reference.Event {
	r, id := Seeded(seed)
	var out []reference.Event
	for i := range 60 {
		user := fmt.Sprintf("c%d-user-%d", seed, i)
		anon := MaybeAnon(r, user, 4)
		at := CorrT0.Add(time.Duration(r.Intn(48*60)) * time.Minute)
		n := 2 + r.Intn(10)
		for k := range n {
			var who string
			out, who = identifying(out, id, user, anon, k, n, at)
			props := map[string]any{}
			if r.Intn(2) == 0 {
				props["plan"] = []string{"free", "pro"}[r.Intn(2)]
			}
			if r.Intn(3) == 0 {
				props["n"] = float64(1 + r.Intn(2))
			}
			// Groups by their own $group_1, or by $groups as SDKs send
			// them (capture numbers the types in order of first use): an
			// event's group is not its person's, and a person's events
			// name several.
			switch r.Intn(6) {
			case 0:
				props["$group_1"] = fmt.Sprintf("org-%d", r.Intn(5))
			case 1:
				props["$groups"] = map[string]any{"org": fmt.Sprintf("org-%d", r.Intn(5))}
			case 2:
				props["$groups"] = map[string]any{"company": fmt.Sprintf("co-%d", r.Intn(3)), "org": fmt.Sprintf("org-%d", r.Intn(5))}
			}
			if r.Intn(5) == 0 {
				props["$set"] = map[string]any{"tier": []string{"gold", "silver"}[r.Intn(2)], "age": float64(20 + r.Intn(3))}
			}
			name := []string{"A", "B", "C", "X", "Y", "Z", "A", "B"}[r.Intn(8)]
			out = append(out, reference.Event{UUID: id(), DistinctID: who, Event: name, At: at, Props: props})
			if r.Intn(6) != 0 {
				at = at.Add(time.Duration(1+r.Intn(180)) * time.Minute)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out
}

// PeriodEvents are seeded random events of 25 persons from 20 February to
// 12 March 2026, sorted by time as SDKs send them (so a person's first
// event is the first ingestion sees), many at the same instant, some
// persons anonymous until they identify, with browser and plan values.
func PeriodEvents(seed int64) []reference.Event {
	r, id := Seeded(seed)
	start := time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC)
	var out []reference.Event
	for i := range 25 {
		user := fmt.Sprintf("p%d-user-%d", seed, i)
		anon := MaybeAnon(r, user, 3)
		n := 1 + r.Intn(14)
		var times []time.Time
		at := start
		for k := range n {
			if k == 0 || r.Intn(4) != 0 {
				at = start.Add(time.Duration(r.Intn(21*24*4)) * 15 * time.Minute)
			}
			times = append(times, at)
		}
		sort.Slice(times, func(a, b int) bool { return times[a].Before(times[b]) })
		for k, at := range times {
			var who string
			out, who = identifying(out, id, user, anon, k, n, at)
			props := map[string]any{}
			if v := []string{"Chrome", "Safari", "", "Firefox"}[r.Intn(4)]; v != "" {
				props["browser"] = v
			}
			if r.Intn(5) == 0 {
				props["$set"] = map[string]any{"plan": []string{"free", "pro"}[r.Intn(2)]}
			}
			out = append(out, reference.Event{UUID: id(), DistinctID: who, Event: []string{"A", "B", "X", "A"}[r.Intn(4)], At: at, Props: props})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out
}

var PathPages = []string{"/", "/home", "/home/", "/item/1", "/item/22", "/item/22/", "/cart", "/pay", "/item/22?ref=ad", "/home?utm=x/"}

// PathEvents are seeded random events of 30 persons over 4 days.
func PathEvents(seed int64) []reference.Event {
	r, id := Seeded(seed)
	start := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	var out []reference.Event
	for i := range 30 {
		user := fmt.Sprintf("s%d-user-%d", seed, i)
		anon := MaybeAnon(r, user, 3)
		at := start.Add(time.Duration(r.Intn(3*24*60)) * time.Minute)
		group := []string{"g1", "g2", "g3", ""}[r.Intn(4)]
		n := 2 + r.Intn(16)
		for k := range n {
			switch r.Intn(6) {
			case 0:
				at = at.Add(30 * time.Minute) // exactly the gap: a new path
			case 1:
				// the same instant: ties broken by uuid
			case 2:
				at = at.Add(time.Duration(31+r.Intn(600)) * time.Minute)
			default:
				at = at.Add(time.Duration(1+r.Intn(29*60)) * time.Second)
			}
			var who string
			out, who = identifying(out, id, user, anon, k, n, at)
			var e reference.Event
			switch x := r.Intn(10); {
			case x < 6:
				e = reference.Event{Event: "$pageview", Props: map[string]any{"$current_url": "https://shop.test" + PathPages[r.Intn(len(PathPages))]}}
				if r.Intn(8) == 0 {
					e.Props["$current_url"] = PathPages[r.Intn(len(PathPages))] // "/" alone stays
				}
			case x < 8:
				e = reference.Event{Event: "$screen", Props: map[string]any{"$screen_name": []string{"Home", "Item", "Cart"}[r.Intn(3)]}}
			default:
				e = reference.Event{Event: []string{"signup", "buy", "$autocapture"}[r.Intn(3)], Props: map[string]any{}}
			}
			e.UUID, e.DistinctID, e.At = id(), who, at
			if r.Intn(6) == 0 {
				e.Props["$browser"] = "Bot"
			}
			if r.Intn(3) == 0 {
				e.Props["plan"] = "pro"
			}
			if group != "" && r.Intn(5) != 0 {
				e.Props["$group_1"] = group
			}
			out = append(out, e)
			if r.Intn(7) == 0 { // a repeat of the same item
				dup := e
				dup.UUID, dup.At = id(), at.Add(time.Duration(r.Intn(90))*time.Second)
				out = append(out, dup)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out
}

// RandomPaths is a random request over the events, its points and
// exclusions among the items it reads (or, now and then, items no event
// has).
func RandomPaths(r *rand.Rand, events []reference.Event) reference.Paths {
	q := reference.Paths{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)}
	if r.Intn(4) == 0 {
		q.From = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // cuts sessions at the range's start
	}
	switch r.Intn(4) {
	case 0:
		q.Pageviews = true
	case 1:
		q.Pageviews, q.Screens = true, true
	case 2:
		q.AllCustom, q.Custom = r.Intn(2) == 0, []string{"$autocapture"}
	}
	if r.Intn(3) == 0 {
		q.Cleaning = append(q.Cleaning, [2]string{`/item/\d+`, `/item/:id`})
	}
	if r.Intn(4) == 0 {
		q.Cleaning = append(q.Cleaning, [2]string{`https://[^/]+`, ``})
	}
	if r.Intn(4) == 0 {
		q.Groupings = []string{"*/item/*", "*ca*"} // both match /cart/item/…: the first wins
	}
	q.ProjectCleaning, q.Replacements = PathsProjectCleaning, r.Intn(3) == 0
	switch r.Intn(6) {
	case 0:
		q.Properties = map[string]string{"plan": "pro"}
	case 1:
		q.TestAccounts = true
	case 2:
		q.GroupIndex = 1
	}
	seen := map[string]bool{"nowhere": true}
	for _, e := range events {
		if item, ok := q.Item(e); ok {
			seen[item] = true
		}
	}
	items := make([]string, 0, len(seen))
	for item := range seen {
		items = append(items, item)
	}
	sort.Strings(items)
	if r.Intn(4) == 0 {
		q.Exclude = []string{items[r.Intn(len(items))]}
	}
	switch r.Intn(4) {
	case 0:
		q.Start = items[r.Intn(len(items))]
	case 1:
		q.End = items[r.Intn(len(items))]
	case 2:
		q.Start, q.End = items[r.Intn(len(items))], items[r.Intn(len(items))]
	}
	q.StepLimit = []int{0, 2, 3, 4, 5, 7}[r.Intn(6)]
	if r.Intn(3) == 0 {
		q.EdgeLimit = 1 + r.Intn(12)
	}
	switch r.Intn(5) {
	case 0:
		q.MinWeight = int64(1 + r.Intn(3))
	case 1:
		q.MaxWeight = int64(1 + r.Intn(3))
	}
	return q
}

var PathT0 = time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)

func PV(who, url string, minutes float64) reference.Event {
	return reference.Event{UUID: uuid.NewString(), DistinctID: who, Event: "$pageview", At: PathT0.Add(time.Duration(minutes * float64(time.Minute))),
		Props: map[string]any{"$current_url": url}}
}

func Ev(who, name string, minutes float64) reference.Event {
	return reference.Event{UUID: uuid.NewString(), DistinctID: who, Event: name, At: PathT0.Add(time.Duration(minutes * float64(time.Minute))), Props: map[string]any{}}
}

// Seeded is a seeded random source and uuids drawn from it, so that a
// run's ties (events at one instant, ordered by uuid) are the next run's.
func Seeded(seed int64) (*rand.Rand, func() string) {
	r := rand.New(rand.NewSource(seed))
	return r, func() string { return uuid.Must(uuid.NewRandomFromReader(r)).String() }
}

// MaybeAnon is the anonymous id user starts with, one time in oneIn, ""
// for none.
func MaybeAnon(r *rand.Rand, user string, oneIn int) string {
	if r.Intn(oneIn) == 0 {
		return user + "-anon"
	}
	return ""
}

// FunnelEvents are seeded random events of 30 persons over two days,
// with many events at the same time, some persons starting anonymous and
// identifying part way.
func FunnelEvents(seed int64) []reference.Event {
	r, id := Seeded(seed)
	var out []reference.Event
	for i := range 30 {
		user := fmt.Sprintf("s%d-user-%d", seed, i)
		anon := MaybeAnon(r, user, 3)
		n := 1 + r.Intn(10)
		at := Fday.Add(-12 * time.Hour)
		for k := range n {
			if k == 0 || r.Intn(4) != 0 { // else the same time as the previous event
				at = Fday.Add(-12*time.Hour + time.Duration(r.Intn(100))*20*time.Minute)
			}
			var who string
			out, who = identifying(out, id, user, anon, k, n, at)
			props := map[string]any{}
			if v := []string{"free", "pro", "", "ent"}[r.Intn(4)]; v != "" {
				props["plan"] = v
			}
			out = append(out, reference.Event{UUID: id(), DistinctID: who,
				Event: []string{"A", "B", "C", "X", "A", "B", "C"}[r.Intn(7)], At: at, Props: props})
		}
	}
	return out
}

// identifying is a person's k-th of n events: one who starts anonymous
// (anon not "") sends the first half as anon and identifies (an
// $identify merging anon into user, appended to out) before the rest.
// It answers out and the distinct id event k is sent under.
func identifying(out []reference.Event, id func() string, user, anon string, k, n int, at time.Time) ([]reference.Event, string) {
	if anon == "" {
		return out, user
	}
	if k < n/2 {
		return out, anon
	}
	if k == n/2 {
		out = append(out, reference.Event{UUID: id(), DistinctID: user, Event: "$identify", At: at,
			Props: map[string]any{"$anon_distinct_id": anon}})
	}
	return out, user
}
