package querybuilder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Params are a request's filter parameters by name, each one JSON value,
// whether they came in a POST body or a GET query string. Typed requests
// are decoded from them (ParseTrends, ...); unknown names are ignored.
type Params map[string]json.RawMessage

// ParseBody reads a POST body: a JSON object holding the filter at the top
// level, or inside "filters" (the saved-insight shape). An empty body is
// an empty filter.
func ParseBody(body []byte) (Params, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return Params{}, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, &ValidationError{Attr: "body", Detail: "the body must be a JSON object of filter parameters"}
	}
	if raw, ok := top["filters"]; ok && !isNull(raw) {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(raw, &inner); err != nil || inner == nil {
			return nil, &ValidationError{Attr: "filters", Detail: "filters must be a JSON object"}
		}
		return Params(inner), nil
	}
	return Params(top), nil
}

// ParseQuery reads a GET query string. PostHog clients JSON-encode arrays
// and objects (events, properties) and send scalars either plainly
// (date_from=-7d) or JSON-encoded (compare=true, breakdown="$browser"), so a
// value that is valid JSON is taken as JSON and anything else as a string.
// Only the first value of a repeated name counts.
func ParseQuery(v url.Values) Params {
	out := make(Params, len(v))
	for k, vals := range v {
		if len(vals) == 0 {
			continue
		}
		s := vals[0]
		if json.Valid([]byte(s)) {
			out[k] = json.RawMessage(s)
			continue
		}
		b, _ := json.Marshal(s) // a Go string always encodes
		out[k] = b
	}
	return out
}

// Project is what an analysis needs to know about its project. It is
// data, handed in by the caller, so the package never reads a store.
type Project struct {
	ID int64
	// Timezone is an IANA zone name; empty means UTC.
	Timezone string
	// WeekStartDay is 0 (weeks start on Sunday) or 1 (Monday).
	WeekStartDay int
	// TestAccountFilters is the project's test_account_filters document,
	// applied when a request sets filter_test_accounts.
	TestAccountFilters json.RawMessage
	// PathCleaningFilters is the project's path_cleaning_filters
	// ([{"regex", "alias"}]), applied by paths with path_replacements.
	PathCleaningFilters json.RawMessage
	// CorrelationConfig is the project's correlation_config (names that
	// funnel correlation leaves out by default).
	CorrelationConfig json.RawMessage
	// PersonDisplayNameProperties name a person in lists of persons: the
	// first one present, else the first distinct id.
	PersonDisplayNameProperties []string
}

// Common is what every analysis request has: the project and the clock,
// the filters on every event it reads and the date range.
type Common struct {
	Project Project
	// Now is the instant relative dates are taken from.
	Now time.Time
	// Schema names the tables the statement reads.
	Schema Schema
	// Properties apply to every event read, as do TestAccounts when
	// FilterTestAccounts is set (the project's test_account_filters).
	Properties         *PropertyFilter
	FilterTestAccounts bool
	TestAccounts       *PropertyFilter
	// DateFrom and DateTo are as sent (empty: the defaults); Range is
	// what they resolve to, aligned to Interval.
	DateFrom, DateTo string
	// ExplicitDate (explicit_date) reads events between the dates as sent
	// rather than between the starts and ends of their intervals.
	ExplicitDate bool
	Interval     Interval
	Range        DateRange

	clock clock
	// relative holds what relative dates in property conditions resolved
	// to (RelativeInstants).
	relative []time.Time
	// firstEvent is the project's first event (Facts) once known: the
	// start of date_from=all.
	firstEvent time.Time
	// settings are the project's settings the request applied beyond its
	// timezone, week and test accounts (SettingsUsed).
	settings map[string]json.RawMessage
	// raw is the request as sent, for the people URLs of its result.
	raw Params
	// actions and cohorts are the saved definitions the request may name
	// (Env), by id.
	actions map[int64]Action
	cohorts map[int64]Cohort
}

// useSetting records that the request applies a project setting (path
// cleaning rules, correlation exclusions), so that its cached answer is
// keyed by it: changing the setting changes the answer.
func (c *Common) useSetting(name string, value json.RawMessage) {
	if c.settings == nil {
		c.settings = map[string]json.RawMessage{}
	}
	c.settings[name] = value
}

// SettingsUsed are the project settings the request applied, by name,
// beyond its timezone, week start and test-account filters.
func (c *Common) SettingsUsed() map[string]json.RawMessage { return c.settings }

// newCommon starts a request in env: its clock in the project's timezone
// and week.
func newCommon(env Env, pr *problems) Common {
	project, now := env.Project, env.Now
	loc, err := project.location()
	if err != nil {
		pr.add("timezone", "the project's %v", err)
		loc = time.UTC
	}
	ws := time.Sunday
	if project.WeekStartDay == 1 {
		ws = time.Monday
	}
	return Common{Project: project, Now: now, Schema: env.Schema.OrDefault(), Interval: IntervalDay,
		clock: clock{now: now.In(loc), loc: loc, weekStart: ws}, actions: env.Actions, cohorts: env.Cohorts}
}

// Base implements Query.
func (c *Common) Base() *Common { return c }

// FromAll reports date_from=all: the range starts at the project's first
// event, which only the engine knows (Facts.FirstEvent). Until Build has
// it, Range holds the interval of date_to.
func (c *Common) FromAll() bool { return strings.EqualFold(strings.TrimSpace(c.DateFrom), "all") }

// applyFacts resolves what depends on the engine: date_from=all's range.
func (c *Common) applyFacts(f Facts) error {
	if !c.FromAll() || f.FirstEvent.Equal(c.firstEvent) {
		return nil
	}
	c.firstEvent = f.FirstEvent
	unit, n := c.Range.compareUnit, c.Range.compareN // compare_to, validated already
	pr := &problems{}
	c.resolveRange(pr)
	c.Range.compareUnit, c.Range.compareN = unit, n
	return pr.err()
}

// properties is a parser of property documents in the request's clock.
func (c *Common) properties(pr *problems) *propertyParser {
	return &propertyParser{common: c, clock: c.clock, pr: pr, relative: &c.relative}
}

// RelativeInstants are what relative dates in the request's property
// conditions (is_date_after -7d) resolved to, in the order they were
// read: besides the range, what of the clock the answer depends on.
func (c *Common) RelativeInstants() []time.Time { return c.relative }

// parse reads the common parameters: properties, filter_test_accounts,
// date_from, date_to and interval.
func (c *Common) parse(p Params, pr *problems) {
	c.raw = p
	if raw, ok := p.document("properties"); ok {
		c.Properties = c.properties(pr).parse(raw, "properties", "properties")
	}
	c.FilterTestAccounts = p.boolean("filter_test_accounts", pr)
	if c.FilterTestAccounts && len(c.Project.TestAccountFilters) > 0 {
		// The project's own document: a fault there is the project's
		// setting, named as such.
		c.TestAccounts = c.properties(pr).parse(c.Project.TestAccountFilters, "test_account_filters", "test_account_filters")
	}
	c.DateFrom, _ = p.str("date_from", pr)
	c.DateTo, _ = p.str("date_to", pr)
	c.ExplicitDate = p.boolean("explicit_date", pr)
	if s, ok := p.str("interval", pr); ok && s != "" {
		iv, known := ParseInterval(s)
		if !known {
			pr.add("interval", "interval must be one of hour, day, week, month; got %q", s)
		} else {
			c.Interval = iv
		}
	}
}

// resolveRange evaluates the date range.
func (c *Common) resolveRange(pr *problems) {
	if r, ok := resolveRange(c.clock, c.DateFrom, c.DateTo, c.Interval, c.firstEvent, pr); ok {
		r.explicit = c.ExplicitDate
		c.Range = r
	}
}

// Location is the project's timezone the request was resolved in.
func (c *Common) Location() *time.Location { return c.clock.loc }

// location resolves the project's timezone.
func (p Project) location() (*time.Location, error) {
	if p.Timezone == "" || p.Timezone == "UTC" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(p.Timezone)
	if err != nil {
		return nil, fmt.Errorf("unknown timezone %q", p.Timezone)
	}
	return loc, nil
}

func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

// present reports whether name was sent with a non-null value.
func (p Params) present(name string) bool {
	raw, ok := p[name]
	return ok && !isNull(raw)
}

// str reads a string parameter. Numbers and booleans are taken as their
// text: a query string cannot tell "123" from 123.
func (p Params) str(name string, pr *problems) (string, bool) {
	raw, ok := p[name]
	if !ok || isNull(raw) {
		return "", false
	}
	s, err := scalarText(raw)
	if err != nil {
		pr.add(name, "%s must be a string", name)
		return "", false
	}
	return s, true
}

// scalarText is a JSON string's content, or a number's or boolean's text.
func scalarText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", errors.New("empty")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case '{', '[':
		return "", errors.New("not a scalar")
	case 'n':
		return "", errors.New("null")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	return string(raw), nil
}

// boolean reads a flag: JSON true/false, or the strings and numbers
// clients put in query strings (true/false, 1/0, yes/no).
func (p Params) boolean(name string, pr *problems) bool {
	raw, ok := p[name]
	if !ok || isNull(raw) {
		return false
	}
	b, err := parseBool(raw)
	if err != nil {
		pr.add(name, "%s must be true or false", name)
	}
	return b
}

func parseBool(raw json.RawMessage) (bool, error) {
	s, err := scalarText(raw)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off", "":
		return false, nil
	}
	return false, errors.New("not a boolean")
}

// integer reads a whole number (JSON number or numeric string).
func (p Params) integer(name string, pr *problems) (int64, bool) {
	raw, ok := p[name]
	if !ok || isNull(raw) {
		return 0, false
	}
	n, err := parseInt(raw)
	if err != nil {
		pr.add(name, "%s must be a whole number", name)
		return 0, false
	}
	return n, true
}

func parseInt(raw json.RawMessage) (int64, error) {
	s, err := scalarText(raw)
	if err != nil {
		return 0, err
	}
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	// 3.0 is a whole number too; JSON encoders write floats that way.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, errors.New("not a whole number")
	}
	return int64(f), nil
}

// document reads a parameter that holds a JSON document (a list or an
// object). Some clients send such documents as JSON text inside a string;
// that text is unwrapped once.
func (p Params) document(name string) (json.RawMessage, bool) {
	raw, ok := p[name]
	if !ok || isNull(raw) {
		return nil, false
	}
	return unwrapDocument(raw), true
}

func unwrapDocument(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			t := strings.TrimSpace(s)
			if t == "" {
				return json.RawMessage("null")
			}
			if (t[0] == '[' || t[0] == '{') && json.Valid([]byte(t)) {
				return json.RawMessage(t)
			}
		}
	}
	return raw
}

// decodeValue decodes a JSON value keeping numbers as json.Number, so
// that 10 and 10.50 keep the text a client sent.
func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// sortedKeys returns an object's keys in order, so that the same request
// always gives the same SQL text.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
