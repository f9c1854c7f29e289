package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
)

// Groups at capture, as PostHog's ingestion does them: an event's $groups
// ({"company": "acme"}) becomes $group_N = "acme" for the type's index N,
// and a $groupidentify ($group_type, $group_key, $group_set) updates its
// group. A type named for the first time gets the project's next index
// (0 to 4, in order of first use, events and types within $groups in the
// order sent); a sixth type refuses the request as any bad input does,
// naming the event's field. Types created by earlier events of a refused
// request stay: they are what a resend creates anyway.

// maxGroupNameLength bounds group types and keys, in characters (PostHog's
// columns hold 400).
const maxGroupNameLength = 400

// groupTypeCache remembers each project's group types for capture, so
// that events naming known types cost no PostgreSQL round trip. Types are
// never renumbered or removed, so an entry never goes stale; a type
// another process created is found by the store on the first miss.
type groupTypeCache struct {
	mu       sync.Mutex
	projects map[int64]map[string]int
}

// index is the index of the project's group type name, created if new.
func (gc *groupTypeCache) index(ctx context.Context, store *metadata.Store, project int64, name string) (int, error) {
	gc.mu.Lock()
	types := gc.projects[project]
	idx, ok := types[name]
	full := len(types) >= metadata.MaxGroupTypes
	gc.mu.Unlock()
	if ok {
		return idx, nil
	}
	if full {
		return 0, metadata.ErrGroupTypesFull
	}
	idx, err := store.EnsureGroupType(ctx, project, name)
	if err != nil {
		return 0, err
	}
	gc.mu.Lock()
	if gc.projects == nil {
		gc.projects = map[int64]map[string]int{}
	}
	if gc.projects[project] == nil {
		gc.projects[project] = map[string]int{}
	}
	gc.projects[project][name] = idx
	gc.mu.Unlock()
	return idx, nil
}

// captureGroups maps the $groups of a project's captured events to
// $group_N and reads their $groupidentify updates.
func (s *Service) captureGroups(ctx context.Context, project int64, p *payload) error {
	for i := range p.events {
		c := &p.events[i]
		identify := c.Event.Event == "$groupidentify"
		// Most events name no group: a look at the text decides. "roups"
		// also finds the key when its $ or g is escaped (\u0024groups);
		// looking for any \u instead would decode every event of a
		// client that escapes non-ASCII text.
		if !identify && !strings.Contains(c.Properties, "roups") {
			continue
		}
		prefix := ""
		if !p.single {
			prefix = "batch[" + strconv.Itoa(i) + "]."
		}
		if err := s.eventGroups(ctx, project, c, identify, prefix); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) eventGroups(ctx context.Context, project int64, c *olap.Capture, identify bool, prefix string) error {
	var props map[string]json.RawMessage
	if err := json.Unmarshal([]byte(c.Properties), &props); err != nil {
		return httpx.Invalid(prefix+"properties", "properties must be a JSON object.")
	}
	changed := false
	if raw := props["$groups"]; isPresent(raw) {
		attr := prefix + "properties.$groups"
		pairs, err := orderedObject(raw)
		if err != nil {
			return httpx.Invalid(attr, "$groups must be an object of group type to group key, such as {\"company\": \"acme\"}.")
		}
		for _, kv := range pairs {
			key, present, err := groupKeyValue(kv.value)
			if err != nil {
				return httpx.Invalid(attr, fmt.Sprintf("$groups[%q] %s.", truncate(kv.key, 64), err))
			}
			if !present {
				continue
			}
			idx, err := s.groupType(ctx, project, kv.key, attr)
			if err != nil {
				return err
			}
			v, _ := json.Marshal(key)
			props["$group_"+strconv.Itoa(idx)] = v
			changed = true
		}
	}
	if identify {
		u, err := s.groupIdentify(ctx, project, props, prefix)
		if err != nil {
			return err
		}
		c.Group = u
	}
	if changed {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // keep the text as sent
		if err := enc.Encode(props); err != nil {
			return httpx.Invalid(prefix+"properties", "properties must be a JSON object.")
		}
		c.Properties = strings.TrimSuffix(b.String(), "\n")
	}
	return nil
}

// groupIdentify reads a $groupidentify's group and properties.
func (s *Service) groupIdentify(ctx context.Context, project int64, props map[string]json.RawMessage, prefix string) (*olap.GroupUpdate, error) {
	typeAttr := prefix + "properties.$group_type"
	name, ok := jsonString(props["$group_type"])
	if !ok || name == "" {
		return nil, httpx.Invalid(typeAttr, "A $groupidentify event needs $group_type, the group type's name.")
	}
	keyAttr := prefix + "properties.$group_key"
	key, present, err := groupKeyValue(props["$group_key"])
	if err == nil && !present {
		err = errors.New("is required")
	}
	if err != nil {
		return nil, httpx.Invalid(keyAttr, "$group_key "+err.Error()+".")
	}
	var set map[string]json.RawMessage
	if raw := props["$group_set"]; isPresent(raw) {
		if raw[0] != '{' || json.Unmarshal(raw, &set) != nil {
			return nil, httpx.Invalid(prefix+"properties.$group_set", "$group_set must be a JSON object of group properties.")
		}
	}
	idx, err := s.groupType(ctx, project, name, typeAttr)
	if err != nil {
		return nil, err
	}
	return &olap.GroupUpdate{TypeIndex: idx, Key: key, Set: set}, nil
}

// groupType is the index of a group type named at attr, created if new.
func (s *Service) groupType(ctx context.Context, project int64, name, attr string) (int, error) {
	switch {
	case name == "":
		return 0, httpx.Invalid(attr, "A group type must be a non-empty name.")
	case utf8.RuneCountInString(name) > maxGroupNameLength:
		return 0, httpx.Invalid(attr, fmt.Sprintf("A group type must be at most %d characters.", maxGroupNameLength))
	case strings.ContainsRune(name, 0):
		return 0, httpx.Invalid(attr, "A group type must not contain a NUL character.")
	}
	idx, err := s.groupTypes.index(ctx, s.store, project, name)
	if errors.Is(err, metadata.ErrGroupTypesFull) {
		return 0, &httpx.Error{Kind: httpx.KindInvalid, Code: "too_many_group_types", Attr: attr,
			Detail: fmt.Sprintf("A project has at most %d group types; %q would be a sixth. Send events with the types the project has (groups_types/).",
				metadata.MaxGroupTypes, truncate(name, 64))}
	}
	return idx, err
}

// groupKeyValue reads a group key: a string, or a number as its text.
// present is false for null and the empty string (no group).
func groupKeyValue(raw json.RawMessage) (key string, present bool, err error) {
	if !isPresent(raw) {
		return "", false, nil
	}
	if s, ok := jsonString(raw); ok {
		if s == "" {
			return "", false, nil
		}
		if utf8.RuneCountInString(s) > maxGroupNameLength {
			return "", false, fmt.Errorf("must be at most %d characters", maxGroupNameLength)
		}
		return s, true, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true, nil
	}
	return "", false, errors.New("must be a string or a number")
}

type keyValue struct {
	key   string
	value json.RawMessage
}

// orderedObject reads a JSON object's members in the order sent.
func orderedObject(raw json.RawMessage) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []keyValue
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, keyValue{k, v})
	}
	return out, nil
}
