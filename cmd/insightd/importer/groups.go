package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"time"
)

// groupType is one of groups_types/.
type groupType struct {
	GroupType      string `json:"group_type"`
	GroupTypeIndex int    `json:"group_type_index"`
}

// group is one of groups/.
type group struct {
	GroupTypeIndex  int             `json:"group_type_index"`
	GroupKey        string          `json:"group_key"`
	GroupProperties json.RawMessage `json:"group_properties"`
	CreatedAt       string          `json:"created_at"`
}

func groupTypes(ctx context.Context, c *Client) ([]groupType, error) {
	var out []groupType
	if err := c.Get(ctx, c.projectPath("groups_types/"), &out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupTypeIndex < out[j].GroupTypeIndex })
	return out, nil
}

// copyGroupTypes makes the target know the source's group types, in the
// source's index order, before any event is sent: a target assigns
// indices as it first meets a type, and the copied insights name types
// by index. Each type is introduced by the source's first $groupidentify
// of it (the same uuid, so the events part later sends it again for
// nothing), or when there is none by a $groupidentify of its first group.
// Then the indices are mapped by name, in case the target already had
// types of its own.
func (im *Importer) copyGroupTypes(ctx context.Context) error {
	src, err := groupTypes(ctx, im.src)
	if err != nil {
		return fmt.Errorf("reading the source's group types: %w", err)
	}
	dst, err := groupTypes(ctx, im.dst)
	if err != nil {
		return fmt.Errorf("reading the target's group types: %w", err)
	}
	have := map[string]int{}
	for _, t := range dst {
		have[t.GroupType] = t.GroupTypeIndex
	}
	if len(dst)+countMissing(src, have) > 5 {
		return fmt.Errorf("the target project has group types %v; the source's %v would make more than 5", dst, src)
	}
	for _, t := range src {
		if _, ok := have[t.GroupType]; ok || im.cfg.DryRun {
			continue
		}
		ev, err := im.firstGroupIdentify(ctx, t)
		if err != nil {
			return err
		}
		if ev == nil {
			continue // a type without groups: nothing names it
		}
		if err := im.capture(ctx, []Event{*ev}); err != nil {
			return err
		}
		// The target assigns the index when it writes: wait for it.
		for i := 0; ; i++ {
			dst, err = groupTypes(ctx, im.dst)
			if err != nil {
				return err
			}
			if slicesHasType(dst, t.GroupType) || i > 50 {
				break
			}
			if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
		for _, d := range dst {
			have[d.GroupType] = d.GroupTypeIndex
		}
	}
	im.groupIndex = map[int]int{}
	for _, t := range src {
		if to, ok := have[t.GroupType]; ok {
			im.groupIndex[t.GroupTypeIndex] = to
		}
	}
	return nil
}

func countMissing(src []groupType, have map[string]int) int {
	n := 0
	for _, t := range src {
		if _, ok := have[t.GroupType]; !ok {
			n++
		}
	}
	return n
}

func slicesHasType(ts []groupType, name string) bool {
	for _, t := range ts {
		if t.GroupType == name {
			return true
		}
	}
	return false
}

// firstGroupIdentify is the source's first $groupidentify of type t, or
// one made from its first group; nil when it has no groups.
func (im *Importer) firstGroupIdentify(ctx context.Context, t groupType) (*Event, error) {
	rows, err := im.src.HogQL(ctx, "SELECT "+eventColumns+" FROM events WHERE event = '$groupidentify' AND properties.$group_type = {t}"+
		" ORDER BY timestamp, toString(uuid) LIMIT 1", map[string]any{"t": t.GroupType})
	if err != nil {
		return nil, fmt.Errorf("reading the source's first $groupidentify of %s: %w", t.GroupType, err)
	}
	if len(rows) == 1 {
		e, _, err := eventFromRow(rows[0])
		if err != nil {
			return nil, fmt.Errorf("the source's first $groupidentify of %s: %w", t.GroupType, err)
		}
		return &e, nil
	}
	var p page
	if err := im.src.Get(ctx, im.src.projectPath("groups/?limit=1&group_type_index="+strconv.Itoa(t.GroupTypeIndex)), &p); err != nil {
		return nil, fmt.Errorf("reading the source's groups of %s: %w", t.GroupType, err)
	}
	if len(p.Results) == 0 {
		return nil, nil
	}
	var g group
	if err := json.Unmarshal(p.Results[0], &g); err != nil {
		return nil, fmt.Errorf("a group of %s cannot be read: %w", t.GroupType, err)
	}
	e := groupIdentify(t.GroupType, g)
	return &e, nil
}

// groupIdentify is the $groupidentify that sets g's properties.
func groupIdentify(typ string, g group) Event {
	props := g.GroupProperties
	if len(props) == 0 || string(props) == "null" {
		props = json.RawMessage("{}")
	}
	body := mustJSON(map[string]any{"$group_type": typ, "$group_key": g.GroupKey, "$group_set": props})
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	if t, err := parseTime(g.CreatedAt); err == nil {
		ts = t.Format(time.RFC3339Nano)
	}
	return Event{UUID: correctionUUID("group", typ, g.GroupKey, string(body)), Event: "$groupidentify",
		DistinctID: typ + "_" + g.GroupKey, Timestamp: ts, Properties: body}
}

// copyGroups makes each of the source's groups a group of the target
// with the same properties: the copied $groupidentify events made most;
// the others get a $groupidentify of their own.
func (im *Importer) copyGroups(ctx context.Context) error {
	types, err := groupTypes(ctx, im.src)
	if err != nil {
		return fmt.Errorf("reading the source's group types: %w", err)
	}
	var fixes []Event
	for _, t := range types {
		target := map[string]any{}
		to, mapped := im.groupIndex[t.GroupTypeIndex]
		if mapped && !im.cfg.DryRun {
			err := im.dst.List(ctx, "groups/?limit=1000&group_type_index="+strconv.Itoa(to), func(raw json.RawMessage) error {
				var g group
				if err := json.Unmarshal(raw, &g); err != nil {
					return err
				}
				var props map[string]any
				_ = json.Unmarshal(g.GroupProperties, &props)
				target[g.GroupKey] = normalize(props)
				return nil
			})
			if err != nil {
				return fmt.Errorf("reading the target's groups of %s: %w", t.GroupType, err)
			}
		}
		err := im.src.List(ctx, "groups/?limit=1000&group_type_index="+url.QueryEscape(strconv.Itoa(t.GroupTypeIndex)), func(raw json.RawMessage) error {
			var g group
			if err := json.Unmarshal(raw, &g); err != nil {
				return fmt.Errorf("a group of %s cannot be read (%v): %.200s", t.GroupType, err, raw)
			}
			im.report.Groups.Total++
			if im.cfg.DryRun {
				return nil
			}
			var props map[string]any
			_ = json.Unmarshal(g.GroupProperties, &props)
			if have, ok := target[g.GroupKey]; ok && reflect.DeepEqual(have, normalize(props)) {
				im.report.Groups.Kept++
				return nil
			}
			im.report.Groups.Copied++
			fixes = append(fixes, groupIdentify(t.GroupType, g))
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading the source's groups of %s: %w", t.GroupType, err)
		}
	}
	im.report.Corrections += int64(len(fixes))
	return im.capture(ctx, fixes)
}
