package olap

import (
	"crypto/sha1"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// PersonUpdate is what one event asks of its person: property updates
// ($set, $set_once, $unset, applied in event-time order whatever the order
// events arrive in) and a link to another distinct id ($identify's
// $anon_distinct_id, $create_alias's alias, $merge_dangerously's alias).
type PersonUpdate struct {
	Set     map[string]json.RawMessage
	SetOnce map[string]json.RawMessage
	Unset   []string
	// Link is the other distinct id; empty for none.
	Link     string
	LinkKind LinkKind
	// Identify marks the person identified ($identify, and any link).
	Identify bool
}

// LinkKind says how a link treats two distinct ids that already belong to
// two different persons.
type LinkKind uint8

const (
	// LinkIdentify and LinkAlias merge the other id's person into this
	// event's person, unless the other person was already identified: two
	// identified users are never merged by accident.
	LinkIdentify LinkKind = iota + 1
	LinkAlias
	// LinkMerge merges whatever the other person is ($merge_dangerously).
	LinkMerge
)

func (u *PersonUpdate) empty() bool {
	return len(u.Set) == 0 && len(u.SetOnce) == 0 && len(u.Unset) == 0 && u.Link == "" && !u.Identify
}

// personNamespace makes person ids derived from a distinct id (version 5
// UUIDs): the first time a distinct id is seen, its person id is a pure
// function of project and distinct id, so two writers agree on it and a
// retry after a failure gets the same one.
var personNamespace = uuid.MustParse("0a6f2b4c-5e1d-4f3a-9c7b-8d2e1f0a3b4c")

// PersonIDFor is the id of the person created for a distinct id never seen
// before in the project.
func PersonIDFor(team int64, distinctID string) uuid.UUID {
	return uuid.NewHash(sha1.New(), personNamespace, []byte(strconv.FormatInt(team, 10)+":"+distinctID), 5)
}

// stamped is a property value and the event time (Unix microseconds) that
// set it.
type stamped struct {
	At    int64           `json:"t"`
	Value json.RawMessage `json:"v"`
}

// propState keeps as much of one property's history as decides its value
// when updates arrive out of order: the latest $set, the latest $unset and
// the earliest few $set_once after that $unset (a $set_once before it can
// never matter again). Replaying all updates in event-time order gives the
// value value() returns; the one case it can miss, kept on purpose to
// bound the state, is more than maxOnce $set_once updates arriving before
// a later $unset that all but falls after them.
type propState struct {
	Set   *stamped  `json:"s,omitempty"`
	Unset *int64    `json:"u,omitempty"`
	Once  []stamped `json:"o,omitempty"` // ascending time, all after Unset
}

const maxOnce = 3

func (p *propState) value() (json.RawMessage, bool) {
	if p.Set != nil && (p.Unset == nil || p.Set.At >= *p.Unset) {
		return p.Set.Value, true
	}
	if len(p.Once) > 0 {
		return p.Once[0].Value, true
	}
	return nil, false
}

func (p *propState) set(v stamped) bool {
	if p.Set != nil && v.At < p.Set.At {
		return false
	}
	p.Set = &v
	return true
}

func (p *propState) unset(at int64) bool {
	if p.Unset != nil && at < *p.Unset {
		return false
	}
	p.Unset = &at
	keep := p.Once[:0]
	for _, o := range p.Once {
		if o.At > at {
			keep = append(keep, o)
		}
	}
	p.Once = keep
	return true
}

func (p *propState) setOnce(v stamped) bool {
	if p.Unset != nil && v.At <= *p.Unset {
		return false
	}
	i := sort.Search(len(p.Once), func(i int) bool { return p.Once[i].At > v.At })
	if i >= maxOnce {
		return false
	}
	p.Once = slices.Insert(p.Once, i, v)
	if len(p.Once) > maxOnce {
		p.Once = p.Once[:maxOnce]
	}
	return true
}

// absorb folds another history of the same property into p (a merge of
// two persons).
func (p *propState) absorb(o *propState) {
	if o.Set != nil {
		p.set(*o.Set)
	}
	if o.Unset != nil {
		p.unset(*o.Unset)
	}
	for _, v := range o.Once {
		p.setOnce(v)
	}
}

// person is a person as the writer holds it between flushes.
type person struct {
	id         uuid.UUID
	createdAt  time.Time
	identified bool
	deleted    bool
	props      map[string]*propState
}

func newPerson(id uuid.UUID, at time.Time) *person {
	return &person{id: id, createdAt: at, props: map[string]*propState{}}
}

func (p *person) prop(key string) *propState {
	s := p.props[key]
	if s == nil {
		s = &propState{}
		p.props[key] = s
	}
	return s
}

// apply records an event's property updates at its time and reports
// whether anything changed.
func (p *person) apply(u *PersonUpdate, at time.Time) bool {
	t := at.UnixMicro()
	changed := false
	for k, v := range u.Set {
		changed = p.prop(k).set(stamped{At: t, Value: v}) || changed
	}
	for _, k := range u.Unset {
		changed = p.prop(k).unset(t) || changed
	}
	for k, v := range u.SetOnce {
		changed = p.prop(k).setOnce(stamped{At: t, Value: v}) || changed
	}
	if at.Before(p.createdAt) {
		p.createdAt = at
		changed = true
	}
	if u.Identify && !p.identified {
		p.identified = true
		changed = true
	}
	return changed
}

// absorb merges src into p.
func (p *person) absorb(src *person) {
	for k, s := range src.props {
		p.prop(k).absorb(s)
	}
	if src.createdAt.Before(p.createdAt) {
		p.createdAt = src.createdAt
	}
}

// properties is the person's current properties as a JSON object, keys
// sorted, for the persons table analyses read.
func (p *person) properties() string {
	m := make(map[string]json.RawMessage, len(p.props))
	for k, s := range p.props {
		if v, ok := s.value(); ok {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		// Values were decoded from JSON, so they re-encode; fail closed.
		return "{}"
	}
	return string(b)
}

func (p *person) times() string {
	b, err := json.Marshal(p.props)
	if err != nil {
		return "{}"
	}
	return string(b)
}

func (p *person) row(team int64, version uint64) []any {
	return []any{p.id, team, p.properties(), p.times(), p.createdAt.UTC(),
		boolByte(p.identified), boolByte(p.deleted), version}
}

// loadPerson rebuilds a person from its stored row.
func loadPerson(id uuid.UUID, times string, createdAt time.Time, identified, deleted bool) (*person, error) {
	p := newPerson(id, createdAt)
	p.identified, p.deleted = identified, deleted
	if times != "" {
		if err := json.Unmarshal([]byte(times), &p.props); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// illegalDistinctIDs are values clients send when they have no real id
// (PostHog's list): linking through one would merge unrelated people.
var illegalDistinctIDs = map[string]bool{
	"anonymous": true, "guest": true, "distinctid": true, "distinct_id": true, "id": true,
	"not_authenticated": true, "email": true, "undefined": true, "true": true, "false": true,
	"0": true, "null": true, "none": true, "nan": true, "[object object]": true, `""`: true, "": true,
}
