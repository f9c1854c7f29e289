package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/olap"
)

// The capture payloads PostHog's SDKs send, parsed into events for the
// writer. Parsing is all or nothing: one bad event rejects the request,
// naming the event's index and field, so a client can fix and resend the
// whole batch without wondering which events were kept.

// maxBatchEvents is the most events one request may carry.
const maxBatchEvents = 100_000

// maxNameLength bounds event names and distinct ids, in characters.
const maxNameLength = 200

// wireEvent is an event as sent. Fields stay raw so that a value of the
// wrong type is reported against its field, not as a parse failure of the
// whole body.
type wireEvent struct {
	Event      json.RawMessage `json:"event"`
	DistinctID json.RawMessage `json:"distinct_id"`
	Properties json.RawMessage `json:"properties"`
	Timestamp  json.RawMessage `json:"timestamp"`
	Offset     json.RawMessage `json:"offset"`
	SentAt     json.RawMessage `json:"sent_at"`
	UUID       json.RawMessage `json:"uuid"`
	// Server-side SDKs put an $identify's person properties beside the
	// event rather than in its properties.
	Set     json.RawMessage `json:"$set"`
	SetOnce json.RawMessage `json:"$set_once"`
	// Where a single-event body carries the project token.
	APIKey      json.RawMessage `json:"api_key"`
	Token       json.RawMessage `json:"token"`
	DollarToken json.RawMessage `json:"$token"`
}

// envelope is a request body: a batch, or one event at the top level.
type envelope struct {
	wireEvent
	Batch               json.RawMessage `json:"batch"`
	HistoricalMigration json.RawMessage `json:"historical_migration"`
}

// propertyHead is what capture reads out of an event's properties.
type propertyHead struct {
	DistinctID     json.RawMessage `json:"distinct_id"`
	Token          json.RawMessage `json:"token"`
	DollarToken    json.RawMessage `json:"$token"`
	Set            json.RawMessage `json:"$set"`
	SetOnce        json.RawMessage `json:"$set_once"`
	Unset          json.RawMessage `json:"$unset"`
	AnonDistinctID json.RawMessage `json:"$anon_distinct_id"`
	Alias          json.RawMessage `json:"alias"`
	IgnoreSentAt   json.RawMessage `json:"$ignore_sent_at"`
	// What GeoIP reads (geoip.go).
	IP           json.RawMessage `json:"$ip"`
	GeoIPDisable json.RawMessage `json:"$geoip_disable"`
}

// payload is a parsed request: its events and the token that authorizes
// them.
type payload struct {
	token  string
	events []olap.Capture
	// geo is what locating each event needs of its properties.
	geo []geoHint
	// single says the body was one event, not a batch: errors name its
	// fields without batch[i].
	single bool
}

// parsePayload reads a capture body received at now. Event fields are
// checked in full; errors name "batch[i].field" or, for a single event,
// the field.
func parsePayload(body []byte, now time.Time, sent *time.Time) (*payload, error) {
	return parsePayloadScan(body, now, sent, true)
}

// parsePayloadScan is parsePayload; scan=false leaves scanBatch out (the
// tests compare the two ways).
func parsePayloadScan(body []byte, now time.Time, sent *time.Time, scan bool) (*payload, error) {
	body = CleanJSONText(bytes.TrimSpace(body))
	if len(body) == 0 {
		return nil, errEmptyBody()
	}
	var env envelope
	var wes []wireEvent
	var heads []propertyHead
	fast := false
	if scan {
		env, wes, heads, fast = scanBatch(body)
	}
	single := false
	if !fast {
		var err error
		if env, wes, single, err = decodePayload(body); err != nil {
			return nil, err
		}
	}
	if !single && len(wes) > maxBatchEvents {
		return nil, &httpx.Error{Kind: httpx.KindTooLarge, Code: "batch_too_large", Attr: "batch",
			Detail: fmt.Sprintf("A batch may hold at most %d events; this one has %d.", maxBatchEvents, len(wes))}
	}
	if !single && len(wes) == 0 {
		return nil, httpx.Invalid("batch", "The batch is empty.")
	}
	if isPresent(env.HistoricalMigration) {
		var b bool
		if json.Unmarshal(env.HistoricalMigration, &b) != nil {
			return nil, httpx.Invalid("historical_migration", "historical_migration must be true or false.")
		}
	}
	batchSentAt, err := optionalTime(env.SentAt)
	if err != nil && !single {
		return nil, httpx.Invalid("sent_at", "sent_at "+err.Error()+".")
	}
	if batchSentAt == nil {
		batchSentAt = sent
	}

	p := &payload{token: firstString(env.APIKey, env.Token, env.DollarToken)}
	if single {
		p.geo = make([]geoHint, 1)
		c, token, err := parseEvent(&env.wireEvent, nil, sent, now, "", &p.geo[0])
		if err != nil {
			return nil, err
		}
		p.events, p.single = []olap.Capture{c}, true
		if p.token == "" {
			p.token = token
		}
		return p, nil
	}
	p.events, p.geo = make([]olap.Capture, len(wes)), make([]geoHint, len(wes))
	enveloped := p.token != ""
	for i := range wes {
		var head *propertyHead
		if heads != nil {
			head = &heads[i]
		}
		c, token, err := parseEvent(&wes[i], head, batchSentAt, now, "", &p.geo[i])
		if err != nil {
			// Again, to name the event in the error (the prefix costs an
			// allocation per event otherwise).
			_, _, err = parseEvent(&wes[i], head, batchSentAt, now, "batch["+strconv.Itoa(i)+"].", nil)
			return nil, err
		}
		p.events[i] = c
		switch {
		case enveloped:
			// The batch's own token says whose events they are, as in
			// PostHog's capture; an event's token property is not read.
		case p.token == "":
			p.token = token
		case token != "" && token != p.token:
			// Without one, the events' tokens do: stored with the others
			// this one would land in the wrong project. PostHog's capture
			// refuses such a batch too.
			return nil, httpx.Invalid("batch["+strconv.Itoa(i)+"]", "This event carries another project's token than the batch's; "+
				"send each project's events in a request of their own.")
		}
	}
	return p, nil
}

// decodePayload is parsePayload's way for bodies scanBatch leaves:
// single events and anything unusual or wrong, which it names.
func decodePayload(body []byte) (env envelope, wes []wireEvent, single bool, err error) {
	if len(body) == 0 {
		return env, nil, false, errEmptyBody()
	}
	switch body[0] {
	case '[':
		// posthog-js sends a bare array of events.
		if wes, err = wireEvents(body); err != nil {
			return env, nil, false, err
		}
	case '{':
		// The common case decodes in one pass; a failure goes the slow
		// way to say what is wrong.
		var fast struct {
			envelope
			Batch []wireEvent `json:"batch"`
		}
		if json.Unmarshal(body, &fast) == nil {
			env, wes = fast.envelope, fast.Batch
			single = fast.Batch == nil
			break
		}
		if err = json.Unmarshal(body, &env); err != nil {
			return env, nil, false, malformed(err)
		}
		if !isPresent(env.Batch) {
			single = true
			break
		}
		if env.Batch[0] != '[' {
			return env, nil, false, httpx.Invalid("batch", "batch must be a list of events.")
		}
		if wes, err = wireEvents(env.Batch); err != nil {
			return env, nil, false, err
		}
	default:
		return env, nil, false, malformed(nil)
	}
	return env, wes, single, nil
}

func errEmptyBody() error { return httpx.Invalid("", "The body is empty: send an event or a batch.") }

// wireEvents decodes a list of events, saying which one is not an object
// when one is not.
func wireEvents(list []byte) ([]wireEvent, error) {
	var wes []wireEvent
	if json.Unmarshal(list, &wes) == nil {
		return wes, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(list, &raws); err != nil {
		return nil, malformed(err)
	}
	wes = make([]wireEvent, len(raws))
	for i, raw := range raws {
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &wes[i]) != nil {
			return nil, httpx.Invalid("batch["+strconv.Itoa(i)+"]", "Each event must be a JSON object.")
		}
	}
	return wes, nil
}

func malformed(err error) *httpx.Error {
	detail := "The body is not valid JSON: send an event object, a list of events, or {\"batch\": [...]}."
	if se, ok := err.(*json.SyntaxError); ok {
		detail = fmt.Sprintf("The body is not valid JSON (at byte %d): %s.", se.Offset, se.Error())
	}
	return &httpx.Error{Kind: httpx.KindInvalid, Code: "parse_error", Detail: detail}
}

// parseEvent validates one event. It returns the token the event carries,
// if any. scanned is what scanBatch read of the event's properties, or nil
// for them to be read here.
func parseEvent(we *wireEvent, scanned *propertyHead, batchSentAt *time.Time, now time.Time, prefix string, geo *geoHint) (olap.Capture, string, error) {
	var c olap.Capture
	name, ok := jsonString(we.Event)
	switch {
	case !isPresent(we.Event):
		return c, "", httpx.Invalid(prefix+"event", "event is required.")
	case !ok || name == "":
		return c, "", httpx.Invalid(prefix+"event", "event must be a non-empty string.")
	case utf8.RuneCountInString(name) > maxNameLength:
		return c, "", httpx.Invalid(prefix+"event", fmt.Sprintf("event must be at most %d characters.", maxNameLength))
	}
	c.Event.Event = name

	var head propertyHead
	props := "{}"
	if isPresent(we.Properties) {
		if we.Properties[0] != '{' {
			return c, "", httpx.Invalid(prefix+"properties", "properties must be a JSON object.")
		}
		if scanned != nil {
			head = *scanned
		} else if mayHaveCaptureKeys(we.Properties) && json.Unmarshal(we.Properties, &head) != nil {
			return c, "", httpx.Invalid(prefix+"properties", "properties must be a JSON object.")
		}
		props = string(we.Properties)
	}
	if geo != nil {
		*geo = hintOf(&head)
	}

	did := we.DistinctID
	attr := prefix + "distinct_id"
	if !isGiven(did) && isGiven(head.DistinctID) {
		did, attr = head.DistinctID, prefix+"properties.distinct_id"
	}
	distinctID, err := distinctIDValue(did)
	if err != nil {
		return c, "", httpx.Invalid(attr, err.Error()+".")
	}
	c.DistinctID = distinctID

	if isGiven(we.UUID) {
		var id uuid.UUID
		var err error
		if len(we.UUID) == 38 && we.UUID[0] == '"' {
			id, err = uuid.ParseBytes(we.UUID[1:37]) // the usual form, without a copy
		} else {
			s, _ := jsonString(we.UUID)
			id, err = uuid.Parse(s)
		}
		if err != nil || id == uuid.Nil {
			return c, "", httpx.Invalid(prefix+"uuid", "uuid must be a UUID such as 0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12.")
		}
		c.UUID, c.ClientUUID = id, true
	} else {
		c.UUID = uuid.Must(uuid.NewV7())
	}

	ts, err := eventTime(we, &head, batchSentAt, now, prefix)
	if err != nil {
		return c, "", err
	}
	c.Timestamp = ts
	if c.ClientUUID {
		c.UUIDTime = uuidTime(c.UUID, we, batchSentAt, now)
	}

	u, err := personUpdate(name, we, &head, prefix)
	if err != nil {
		return c, "", err
	}
	c.Person = u
	if isPresent(we.Set) || isPresent(we.SetOnce) {
		// Keep what was sent beside the event with the event, as PostHog does.
		if props, err = foldPersonProperties(props, u); err != nil {
			return c, "", httpx.Invalid(prefix+"properties", err.Error())
		}
	}
	if name == "$autocapture" || strings.Contains(props, `"$elements"`) {
		if props, err = withElementsChain(props); err != nil {
			return c, "", httpx.Invalid(prefix+"properties.$elements", err.Error()+".")
		}
	}
	c.Properties = props
	return c, firstString(we.APIKey, we.Token, we.DollarToken, head.Token, head.DollarToken), nil
}

// eventTime is PostHog's rule: a client timestamp is corrected for the
// client's clock skew when the request says when it was sent (sent_at,
// unless the event sets $ignore_sent_at); without a timestamp, offset
// (milliseconds before sending) counts back from now; else now.
func eventTime(we *wireEvent, head *propertyHead, batchSentAt *time.Time, now time.Time, prefix string) (time.Time, error) {
	sentAt := batchSentAt
	if isGiven(we.SentAt) {
		t, err := optionalTime(we.SentAt)
		if err != nil {
			return time.Time{}, httpx.Invalid(prefix+"sent_at", "sent_at "+err.Error()+".")
		}
		sentAt = t
	}
	if isPresent(head.IgnoreSentAt) {
		if b, _ := strconv.ParseBool(string(head.IgnoreSentAt)); b {
			sentAt = nil
		}
	}
	var ts time.Time
	switch {
	case isGiven(we.Timestamp):
		t, err := optionalTime(we.Timestamp)
		if err != nil {
			return time.Time{}, httpx.Invalid(prefix+"timestamp", "timestamp "+err.Error()+".")
		}
		ts = *t
		if sentAt != nil {
			ts = ts.Add(now.Sub(*sentAt))
		}
	case isGiven(we.Offset):
		ms, err := strconv.ParseFloat(string(we.Offset), 64)
		if err != nil || ms < 0 || ms > float64(100*365*24*time.Hour/time.Millisecond) {
			return time.Time{}, httpx.Invalid(prefix+"offset", "offset must be a number of milliseconds.")
		}
		ts = now.Add(-time.Duration(ms * float64(time.Millisecond)))
	default:
		ts = now
	}
	// DateTime64(6) holds 1900-01-01 to 2299-12-31.
	if ts.Year() < 1900 || ts.Year() > 2299 {
		return time.Time{}, httpx.Invalid(prefix+"timestamp", "timestamp is outside the years 1900 to 2299.")
	}
	return ts.UTC().Truncate(time.Microsecond), nil
}

// uuidTime is when the client made a version 7 uuid, on the server's
// clock: the request's sent_at tells the client clock's skew. Zero when
// the uuid or the request does not say (the writer then asks ClickHouse
// whether the event is a retry).
func uuidTime(id uuid.UUID, we *wireEvent, batchSentAt *time.Time, now time.Time) time.Time {
	made := olap.UUIDTime(id)
	sent := batchSentAt
	if isGiven(we.SentAt) {
		sent, _ = optionalTime(we.SentAt) // already validated
	}
	if made.IsZero() || sent == nil {
		return time.Time{}
	}
	return made.Add(now.Sub(*sent))
}

// timeLayouts are the ISO 8601 forms accepted, most common first. A time
// without a zone is UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

func optionalTime(raw json.RawMessage) (*time.Time, error) {
	if !isGiven(raw) {
		return nil, nil
	}
	s, ok := jsonString(raw)
	if !ok {
		return nil, fmt.Errorf("must be an ISO 8601 time string")
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return &t, nil
		}
	}
	return nil, fmt.Errorf("must be an ISO 8601 time such as 2026-01-02T03:04:05.678Z, not %q", truncate(s, 64))
}

// distinctIDValue accepts a string or a number (some SDKs send user ids
// as numbers), as PostHog does.
func distinctIDValue(raw json.RawMessage) (string, error) {
	if !isPresent(raw) {
		return "", fmt.Errorf("distinct_id is required")
	}
	s, ok := jsonString(raw)
	if !ok {
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return "", fmt.Errorf("distinct_id must be a string or a number")
		}
		s = n.String()
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", fmt.Errorf("distinct_id must not be empty")
	case utf8.RuneCountInString(s) > maxNameLength:
		return "", fmt.Errorf("distinct_id must be at most %d characters", maxNameLength)
	}
	return s, nil
}

// personUpdate reads what the event asks of its person.
func personUpdate(name string, we *wireEvent, head *propertyHead, prefix string) (*olap.PersonUpdate, error) {
	switch {
	case isPresent(head.Set) || isPresent(head.SetOnce) || isPresent(head.Unset) || isPresent(we.Set) || isPresent(we.SetOnce):
	case name == "$identify" || name == "$create_alias" || name == "$merge_dangerously":
	default:
		return nil, nil // most events: nothing for the person
	}
	u := &olap.PersonUpdate{}
	objects := []struct {
		raw  json.RawMessage
		dst  *map[string]json.RawMessage
		attr string
	}{
		{head.Set, &u.Set, "properties.$set"},
		{head.SetOnce, &u.SetOnce, "properties.$set_once"},
		{we.Set, &u.Set, "$set"},
		{we.SetOnce, &u.SetOnce, "$set_once"},
	}
	for _, o := range objects {
		if !isPresent(o.raw) {
			continue
		}
		var m map[string]json.RawMessage
		if o.raw[0] != '{' || json.Unmarshal(o.raw, &m) != nil {
			return nil, httpx.Invalid(prefix+o.attr, o.attr+" must be a JSON object.")
		}
		if *o.dst == nil {
			*o.dst = m
			continue
		}
		for k, v := range m {
			(*o.dst)[k] = v
		}
	}
	if isPresent(head.Unset) {
		if json.Unmarshal(head.Unset, &u.Unset) != nil {
			var m map[string]json.RawMessage
			if json.Unmarshal(head.Unset, &m) != nil {
				return nil, httpx.Invalid(prefix+"properties.$unset", "$unset must be a list of property names.")
			}
			for k := range m {
				u.Unset = append(u.Unset, k)
			}
		}
	}
	var link json.RawMessage
	switch name {
	case "$identify":
		u.Identify, u.LinkKind, link = true, olap.LinkIdentify, head.AnonDistinctID
	case "$create_alias":
		u.Identify, u.LinkKind, link = true, olap.LinkAlias, head.Alias
	case "$merge_dangerously":
		u.Identify, u.LinkKind, link = true, olap.LinkMerge, head.Alias
	}
	if isGiven(link) {
		other, err := distinctIDValue(link)
		if err != nil {
			field := "properties.alias"
			if name == "$identify" {
				field = "properties.$anon_distinct_id"
			}
			return nil, httpx.Invalid(prefix+field, strings.Replace(err.Error(), "distinct_id", field, 1)+".")
		}
		u.Link = other
	}
	if u.Set == nil && u.SetOnce == nil && u.Unset == nil && !u.Identify {
		return nil, nil
	}
	return u, nil
}

// foldPersonProperties writes the event's top-level $set and $set_once
// into its properties. The other properties keep their JSON as sent: read
// as Go values, a number such as 9007199254740993 came back rounded.
func foldPersonProperties(props string, u *olap.PersonUpdate) (string, error) {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(props), &m); err != nil {
		return "", err
	}
	for key, v := range map[string]map[string]json.RawMessage{"$set": u.Set, "$set_once": u.SetOnce} {
		if v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		m[key] = b
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// captureKeyHints are fragments of the property keys capture reads. The
// body was already checked to be valid JSON, so properties holding none of
// them (and no \u escape that could spell one) need no second decode:
// most events, and most of the parsing time.
var captureKeyHints = [][]byte{[]byte(`distinct_id"`), []byte(`token"`), []byte(`"$set`),
	[]byte(`"$unset"`), []byte(`"alias"`), []byte(`"$ignore_sent_at"`), []byte(`"$ip"`), []byte(`"$geoip_disable"`), []byte(`\u`)}

func mayHaveCaptureKeys(props []byte) bool {
	for _, h := range captureKeyHints {
		if bytes.Contains(props, h) {
			return true
		}
	}
	return false
}
