package olap

import (
	"encoding/json"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"
)

// TestPropertyUpdatesInAnyArrivalOrderGiveTheEventTimeReplay checks the
// compact per-property state against the definition: sort the updates by
// event time and apply them one by one.
func TestPropertyUpdatesInAnyArrivalOrderGiveTheEventTimeReplay(t *testing.T) {
	type op struct {
		kind string // set, set_once, unset
		at   int
		val  string
	}
	replay := func(ops []op) (string, bool) {
		sorted := append([]op(nil), ops...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].at < sorted[j].at })
		val, has := "", false
		for _, o := range sorted {
			switch o.kind {
			case "set":
				val, has = o.val, true
			case "set_once":
				if !has {
					val, has = o.val, true
				}
			case "unset":
				val, has = "", false
			}
		}
		return val, has
	}
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := range 20000 {
		var ops []op
		onces := 0
		used := map[int]bool{}
		for i := range 1 + rng.IntN(7) {
			at := rng.IntN(1000)
			for used[at] { // distinct times: ties have no defined order
				at = rng.IntN(1000)
			}
			used[at] = true
			kind := []string{"set", "set_once", "unset"}[rng.IntN(3)]
			if kind == "set_once" {
				if onces >= maxOnce {
					kind = "set"
				}
				onces++
			}
			ops = append(ops, op{kind, at, "v" + strconv.Itoa(i)})
		}
		wantVal, wantHas := replay(ops)
		p := newPerson(PersonIDFor(1, "x"), base)
		for _, i := range rng.Perm(len(ops)) {
			o := ops[i]
			u := &PersonUpdate{}
			v, _ := json.Marshal(o.val)
			switch o.kind {
			case "set":
				u.Set = map[string]json.RawMessage{"k": v}
			case "set_once":
				u.SetOnce = map[string]json.RawMessage{"k": v}
			case "unset":
				u.Unset = []string{"k"}
			}
			p.apply(u, base.Add(time.Duration(o.at)*time.Second))
		}
		got, has := p.props["k"].value()
		var gotVal string
		if has {
			_ = json.Unmarshal(got, &gotVal)
		}
		if has != wantHas || gotVal != wantVal {
			t.Fatalf("case %d %+v: want %q (%v), got %q (%v)", n, ops, wantVal, wantHas, gotVal, has)
		}
		// The state survives its stored form.
		q, err := loadPerson(p.id, p.times(), p.createdAt, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if q.properties() != p.properties() {
			t.Fatalf("case %d: stored state reloads as %s, want %s", n, q.properties(), p.properties())
		}
	}
}

func TestPersonIDsForNewDistinctIDsAreStable(t *testing.T) {
	a, b := PersonIDFor(1, "user"), PersonIDFor(1, "user")
	if a != b || a == PersonIDFor(2, "user") || a == PersonIDFor(1, "user2") {
		t.Fatal("a new distinct id's person id must be a function of project and distinct id")
	}
}
