package api

import (
	"fmt"
	"slices"
	"testing"
)

// tileOrders is each tile's (insight id or 0 for text, order) in the
// order the tiles are listed; a tile without order fails the test.
func tileOrders(t *testing.T, d map[string]any) (ids []int64, orders []int) {
	t.Helper()
	ids = tileInsights(t, d)
	for k, x := range d["tiles"].([]any) {
		o, ok := x.(map[string]any)["order"].(float64)
		if !ok {
			t.Fatalf("tiles[%d] has no order: %v", k, x)
		}
		orders = append(orders, int(o))
	}
	return ids, orders
}

// PostHog's MCP server requires tiles[].order; PostHog's serializer gives
// each tile its place when the tiles are listed by their sm layout (y,
// then x, 100 where missing), and lists them so.
func TestDashboardTilesCarryTheirOrder(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	views := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}}
	var ins []int64
	for _, name := range []string{"Unplaced", "Top right", "Top left", "Unplaced too"} {
		ins = append(ins, idOf(f.newInsight(t, map[string]any{"name": name, "filters": views})))
	}
	d := f.newDashboard(t, map[string]any{"name": "Ordered"})
	path := f.dashboard(f.a.ProjectID, d["id"])
	sm := func(y, x any) map[string]any {
		return map[string]any{"sm": map[string]any{"y": y, "x": x, "w": 6, "h": 5}}
	}
	// Tiles are created (so numbered) in this order.
	st, out := call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{
		map[string]any{"insight": ins[0]},
		map[string]any{"insight": ins[1], "layouts": sm(0, 6)},
		map[string]any{"insight": ins[2], "layouts": sm(0, 0)},
		map[string]any{"text": map[string]any{"body": "Notes"}, "layouts": sm(5, 0)},
		map[string]any{"insight": ins[3], "layouts": map[string]any{"sm": map[string]any{"y": "top"}}},
	}})
	if st != 200 {
		t.Fatalf("add tiles: %d %v", st, out)
	}
	want := []int64{ins[2], ins[1], 0, ins[0], ins[3]}
	for name, body := range map[string]map[string]any{"the update's answer": out, "a retrieve": f.getDashboard(t, d["id"], "")} {
		t.Run(name+" lists tiles by layout, each with its place as order", func(t *testing.T) {
			ids, orders := tileOrders(t, body)
			if !slices.Equal(ids, want) || !slices.Equal(orders, []int{0, 1, 2, 3, 4}) {
				t.Fatalf("tiles %v orders %v, want %v in order", ids, orders, want)
			}
		})
	}
	tiles := out["tiles"].([]any)
	unplaced := tiles[3].(map[string]any)
	t.Run("order is read-only: a tile sent back whole with another order keeps its place", func(t *testing.T) {
		sent := map[string]any{}
		for k, v := range unplaced {
			sent[k] = v
		}
		sent["order"] = 0
		st, out := call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{sent}})
		if st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		if ids, orders := tileOrders(t, out); !slices.Equal(ids, want) || !slices.Equal(orders, []int{0, 1, 2, 3, 4}) {
			t.Fatalf("tiles %v orders %v", ids, orders)
		}
	})
	t.Run("moving a tile's layout moves its order", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{
			map[string]any{"id": unplaced["id"], "layouts": sm(0, 12)}}})
		if st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		ids, orders := tileOrders(t, out)
		if !slices.Equal(ids, []int64{ins[2], ins[1], ins[0], 0, ins[3]}) || !slices.Equal(orders, []int{0, 1, 2, 3, 4}) {
			t.Fatalf("tiles %v orders %v", ids, orders)
		}
	})
	t.Run("a deleted tile leaves no gap", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{
			map[string]any{"id": tiles[0].(map[string]any)["id"], "deleted": true}}})
		if st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		ids, orders := tileOrders(t, out)
		if !slices.Equal(ids, []int64{ins[1], ins[0], 0, ins[3]}) || !slices.Equal(orders, []int{0, 1, 2, 3}) {
			t.Fatalf("tiles %v orders %v", ids, orders)
		}
	})
	t.Run("a dashboard without tiles has none", func(t *testing.T) {
		empty := f.newDashboard(t, map[string]any{"name": "Empty"})
		if got := fmt.Sprint(empty["tiles"]); got != "[]" {
			t.Fatalf("tiles %s", got)
		}
	})
}
