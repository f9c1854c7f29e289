package olap

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// Forgetting one team after a person's deletion takes its distinct ids
// out of the count the cache is trimmed by: the other teams' ids stay
// cached until the count truly passes the limit.
func TestForgettingATeamLowersTheCachedCount(t *testing.T) {
	id := newIdentity(nil, chsql.DefaultSchema(), nil, 10)
	for team, n := range map[int64]int{1: 8, 2: 4} {
		ti := &teamIdentity{id: team, ids: map[string]uuid.UUID{}, persons: map[uuid.UUID]*person{}}
		id.teams[team] = ti
		out := &pending{persons: map[*person]int64{}}
		for i := 0; i < n; i++ {
			id.personOf(ti, fmt.Sprintf("d%d", i), time.Now(), out)
		}
	}
	if id.cached != 12 {
		t.Fatalf("cached %d, want 12", id.cached)
	}
	id.forget(1)
	id.forget(3) // a team never loaded
	if id.cached != 4 {
		t.Fatalf("after forgetting team 1: cached %d, want team 2's 4", id.cached)
	}
	id.trim()
	if got := len(id.teams[2].ids); got != 4 {
		t.Fatalf("trim dropped team 2's ids (%d left) though 4 are under the limit of 10", got)
	}
}
