package olap

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// GroupUpdate is what a $groupidentify event asks of its group: the group
// (type index and key, resolved by capture) and the properties it sets.
// Updates apply in event-time order per property, whatever the order
// events arrive in, as persons' $set do (persons.go).
type GroupUpdate struct {
	TypeIndex int
	Key       string
	Set       map[string]json.RawMessage
}

// groupsColumns are the columns the writer fills in the groups table
// (migrations/clickhouse 0008), which holds every version of every group;
// the highest version of a group is its current state.
var groupsColumns = []string{"team_id", "group_type_index", "group_key", "group_properties", "property_times", "created_at", "version"}

// groupsTable is the groups table of the writer's schema.
func (w *Writer) groupsTable() Table {
	name := w.schema.Groups
	if name == "" {
		name = chsql.DefaultSchema().Groups // a schema from before groups
	}
	return Table{name, groupsColumns}
}

// maxCachedGroups bounds the groups the writer remembers; past it the
// cache is dropped and groups are read back from ClickHouse on their next
// update.
const maxCachedGroups = 1_000_000

type groupID struct {
	team  int64
	index uint8
	key   string
}

// groupState is a group as the writer holds it between flushes: each
// property's latest $group_set and the earliest event time seen.
type groupState struct {
	props     map[string]*propState
	createdAt time.Time
}

func (g *groupState) apply(set map[string]json.RawMessage, at time.Time) bool {
	changed := false
	t := at.UnixMicro()
	for k, v := range set {
		s := g.props[k]
		if s == nil {
			s = &propState{}
			g.props[k] = s
		}
		changed = s.set(stamped{At: t, Value: v}) || changed
	}
	if at.Before(g.createdAt) {
		g.createdAt = at
		changed = true
	}
	return changed
}

func (g *groupState) row(id groupID, version uint64) []any {
	values := make(map[string]json.RawMessage, len(g.props))
	for k, s := range g.props {
		if s == nil {
			continue
		}
		if v, ok := s.value(); ok {
			values[k] = v
		}
	}
	props, err := json.Marshal(values)
	if err != nil {
		props = []byte("{}") // values were decoded from JSON: they re-encode
	}
	times, err := json.Marshal(g.props)
	if err != nil {
		times = []byte("{}")
	}
	return []any{id.team, id.index, id.key, string(props), string(times), g.createdAt.UTC(), version}
}

// groupCache is the writer's memory of groups. Like identity, it belongs
// to the preparing stage alone, and it is a cache of the groups table: it
// is dropped when a batch fails (its generation changes), since the
// failed batch's group rows may or may not have landed.
type groupCache struct {
	gen    uint64
	groups map[groupID]*groupState
	clock  versionClock
}

// groupWrite is one update with its event's project and time.
type groupWrite struct {
	id  groupID
	at  time.Time
	set map[string]json.RawMessage
}

// groupWrites are the group updates of a batch's requests, in order.
// Events dropped as duplicates are included: applying an update again
// changes no value.
func groupWrites(group []*writeRequest) []groupWrite {
	var out []groupWrite
	for _, r := range group {
		for i := range r.events {
			c := &r.events[i]
			if c.Group == nil {
				continue
			}
			out = append(out, groupWrite{id: groupID{c.TeamID, uint8(c.Group.TypeIndex), c.Group.Key}, at: c.Timestamp, set: c.Group.Set})
		}
	}
	return out
}

// prepareGroups applies a batch's group updates (prepared in generation
// gen) and returns the rows of the groups table to write.
func (w *Writer) prepareGroups(ctx context.Context, gen uint64, group []*writeRequest) ([][]any, error) {
	writes := groupWrites(group)
	if len(writes) == 0 {
		return nil, nil
	}
	gc := &w.groups
	if gc.groups == nil || gc.gen != gen || len(gc.groups) > maxCachedGroups {
		gc.groups, gc.gen = map[groupID]*groupState{}, gen
	}
	missing := map[int64][]groupID{}
	seen := map[groupID]bool{}
	for _, u := range writes {
		if gc.groups[u.id] == nil && !seen[u.id] {
			seen[u.id] = true
			missing[u.id.team] = append(missing[u.id.team], u.id)
		}
	}
	teams := make([]int64, 0, len(missing))
	for t := range missing {
		teams = append(teams, t)
	}
	sort.Slice(teams, func(i, j int) bool { return teams[i] < teams[j] })
	for _, t := range teams {
		if err := w.loadGroups(ctx, t, missing[t]); err != nil {
			return nil, err
		}
	}
	var dirty []groupID
	isDirty := map[groupID]bool{}
	for _, u := range writes {
		g := gc.groups[u.id]
		fresh := g == nil
		if fresh {
			g = &groupState{props: map[string]*propState{}, createdAt: u.at}
			gc.groups[u.id] = g
		}
		if g.apply(u.set, u.at) || fresh {
			if !isDirty[u.id] {
				isDirty[u.id] = true
				dirty = append(dirty, u.id)
			}
		}
	}
	rows := make([][]any, len(dirty))
	for i, id := range dirty {
		rows[i] = gc.groups[id].row(id, gc.clock.next())
	}
	return rows, nil
}

// loadGroups reads the current state of a project's groups ids into the
// cache; groups never stored stay absent.
func (w *Writer) loadGroups(ctx context.Context, team int64, ids []groupID) error {
	keys := make([]any, len(ids))
	for i, id := range ids {
		keys[i] = map[string]any{"i": id.index, "k": id.key}
	}
	text, err := jsonLines(keys)
	if err != nil {
		return fmt.Errorf("load groups: %w", err)
	}
	rows, err := w.engine.Query(ctx, chsql.Statement{
		SQL: `SELECT group_type_index, group_key, argMax(property_times, version), argMax(created_at, version)
FROM ` + w.groupsTable().name + ` WHERE team_id = {team:Int64}
  AND (group_type_index, group_key) IN (SELECT i, k FROM format(JSONEachRow, 'i UInt8, k String', {keys:String}))
GROUP BY group_type_index, group_key`,
		Params: map[string]any{"team": team, "keys": text},
	})
	if err != nil {
		return fmt.Errorf("load groups: %w", err)
	}
	for _, r := range rows.Data {
		idx, _ := r[0].(uint64)
		key, _ := r[1].(string)
		times, _ := r[2].(string)
		created, _ := r[3].(time.Time)
		g := &groupState{props: map[string]*propState{}, createdAt: created}
		if times != "" {
			if err := json.Unmarshal([]byte(times), &g.props); err != nil {
				return fmt.Errorf("group %d/%q: stored property times: %w", idx, key, err)
			}
		}
		w.groups.groups[groupID{team, uint8(idx), key}] = g
	}
	return nil
}
