package ingest

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// scanBatch reads the common capture body, a batch of event objects
// ({"batch": [...]} or a bare list), in one pass over the bytes: it checks
// the JSON, cuts out the fields capture reads (as slices of body, not
// copies) and the capture keys of each event's properties. encoding/json
// took about a quarter of the server's CPU under load doing the same in
// three passes (a validity check, the decode, a second decode of the
// properties), copying every raw field.
//
// It answers ok=false for anything else or anything unusual: invalid JSON,
// a single event, a field sent twice or spelled in another case (which
// encoding/json matches), an escaped key. parsePayload then takes the
// encoding/json path, which also says what is wrong. On the bodies it
// accepts it gives what that path gives; FuzzScanBatch compares the two.
func scanBatch(body []byte) (env envelope, wes []wireEvent, heads []propertyHead, ok bool) {
	s := jsonScan{b: body}
	switch {
	case len(body) > 0 && body[0] == '[':
		wes, heads, ok = s.events()
	case len(body) > 0 && body[0] == '{':
		var batchSeen bool
		ok = s.object(func(key []byte) bool {
			if string(key) != "batch" {
				return s.field(key, envelopeField(&env, key), envelopeKeys)
			}
			if batchSeen || s.i >= len(s.b) || s.b[s.i] != '[' {
				return false // null, a duplicate or a wrong type: the slow path
			}
			batchSeen = true
			var fine bool
			wes, heads, fine = s.events()
			return fine
		})
		ok = ok && batchSeen
	}
	if ok {
		s.ws()
		ok = s.i == len(s.b)
	}
	if !ok {
		return envelope{}, nil, nil, false
	}
	return env, wes, heads, true
}

// The field names of envelope, wireEvent and propertyHead, for spotting a
// key that encoding/json would match without being spelled the same.
var (
	eventKeys = []string{"event", "distinct_id", "properties", "timestamp", "offset", "sent_at", "uuid",
		"$set", "$set_once", "api_key", "token", "$token"}
	envelopeKeys = append([]string{"batch", "historical_migration"}, eventKeys...)
	headKeys     = []string{"distinct_id", "token", "$token", "$set", "$set_once", "$unset",
		"$anon_distinct_id", "alias", "$ignore_sent_at", "$ip", "$geoip_disable"}
)

func eventField(we *wireEvent, key []byte) *json.RawMessage {
	switch string(key) {
	case "event":
		return &we.Event
	case "distinct_id":
		return &we.DistinctID
	case "properties":
		return &we.Properties
	case "timestamp":
		return &we.Timestamp
	case "offset":
		return &we.Offset
	case "sent_at":
		return &we.SentAt
	case "uuid":
		return &we.UUID
	case "$set":
		return &we.Set
	case "$set_once":
		return &we.SetOnce
	case "api_key":
		return &we.APIKey
	case "token":
		return &we.Token
	case "$token":
		return &we.DollarToken
	}
	return nil
}

func envelopeField(env *envelope, key []byte) *json.RawMessage {
	if string(key) == "historical_migration" {
		return &env.HistoricalMigration
	}
	return eventField(&env.wireEvent, key)
}

func headField(h *propertyHead, key []byte) *json.RawMessage {
	switch string(key) {
	case "distinct_id":
		return &h.DistinctID
	case "token":
		return &h.Token
	case "$token":
		return &h.DollarToken
	case "$set":
		return &h.Set
	case "$set_once":
		return &h.SetOnce
	case "$unset":
		return &h.Unset
	case "$anon_distinct_id":
		return &h.AnonDistinctID
	case "alias":
		return &h.Alias
	case "$ignore_sent_at":
		return &h.IgnoreSentAt
	case "$ip":
		return &h.IP
	case "$geoip_disable":
		return &h.GeoIPDisable
	}
	return nil
}

// foldsTo says whether encoding/json would take key for one of names
// (it matches field names case-insensitively, with Unicode's simple
// folding) though it is spelled differently.
func foldsTo(key []byte, names []string) bool {
	ascii := true
	for _, c := range key {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	for _, n := range names {
		if (!ascii || len(n) == len(key)) && bytes.EqualFold(key, []byte(n)) && string(key) != n {
			return true
		}
	}
	return false
}

// jsonScan walks JSON text, checking it as encoding/json does.
type jsonScan struct {
	b     []byte
	i     int
	depth int
	// esc says the last key read held an escape.
	esc bool
}

// maxScanDepth bounds nesting; deeper bodies go the slow way.
const maxScanDepth = 1000

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// field reads the value of key into dst (nil: skip it), refusing a
// duplicate, an escaped key and a key that folds to one of names.
func (s *jsonScan) field(key []byte, dst *json.RawMessage, names []string) bool {
	if dst == nil {
		if s.esc || foldsTo(key, names) {
			return false
		}
		return s.value()
	}
	if s.esc || *dst != nil {
		return false
	}
	start := s.i
	if !s.value() {
		return false
	}
	*dst = s.b[start:s.i:s.i]
	return true
}

// events reads a list of event objects.
func (s *jsonScan) events() ([]wireEvent, []propertyHead, bool) {
	// Each event has an "event" key (or is refused): counting them is far
	// cheaper than growing the lists (nested "event" keys only add room).
	// No more room than a batch may hold, or than the body's bytes can
	// make events of: a body of nothing but "event" strings (a few kB of
	// gzip) once sized the lists at 1.3 GB before it was refused.
	n := min(bytes.Count(s.b[s.i:], []byte(`"event"`)), (len(s.b)-s.i)/len(`{"event":""}`), maxBatchEvents) + 1
	wes := make([]wireEvent, 0, n)
	heads := make([]propertyHead, 0, n)
	ok := s.array(func() bool {
		if s.i >= len(s.b) || s.b[s.i] != '{' {
			return false
		}
		wes = append(wes, wireEvent{})
		heads = append(heads, propertyHead{})
		we, head := &wes[len(wes)-1], &heads[len(heads)-1]
		return s.object(func(key []byte) bool {
			if string(key) != "properties" || s.esc {
				return s.field(key, eventField(we, key), eventKeys)
			}
			if we.Properties != nil {
				return false
			}
			start := s.i
			if s.i < len(s.b) && s.b[s.i] == '{' {
				if !s.object(func(key []byte) bool { return s.field(key, headField(head, key), headKeys) }) {
					return false
				}
			} else if !s.value() {
				return false
			}
			we.Properties = s.b[start:s.i:s.i]
			return true
		})
	})
	return wes, heads, ok
}

// object reads an object at s.i, calling member with each key (the
// scanner then at the value, which member must read).
func (s *jsonScan) object(member func(key []byte) bool) bool {
	return s.container('}', func() bool {
		lo, hi, esc, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		s.esc = esc
		return member(s.b[lo:hi])
	})
}

// array reads an array at s.i, calling elem at each element.
func (s *jsonScan) array(elem func() bool) bool { return s.container(']', elem) }

// container reads an object or array at s.i (its opening character),
// calling item at each member or element, up to closing.
func (s *jsonScan) container(closing byte, item func() bool) bool {
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	defer func() { s.depth-- }()
	s.i++ // '{' or '['
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closing {
		s.i++
		return true
	}
	for {
		if !item() {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case closing:
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *jsonScan) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, _, ok := s.str()
		return ok
	case c == '{':
		return s.object(func([]byte) bool { return s.value() })
	case c == '[':
		return s.array(s.value)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

func (s *jsonScan) literal(lit string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// str reads a string at s.i: its contents' bounds and whether they hold an
// escape. Bytes that are not UTF-8 pass, as in encoding/json.
func (s *jsonScan) str() (lo, hi int, esc, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return 0, 0, false, false
	}
	s.i++
	lo = s.i
	for s.i < len(s.b) {
		// Most bytes of a string need no attention: skip them in a tight loop.
		for s.i < len(s.b) && plainStringByte[s.b[s.i]] {
			s.i++
		}
		if s.i >= len(s.b) {
			break
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return lo, s.i - 1, esc, true
		case c == '\\':
			esc = true
			if s.i+1 >= len(s.b) {
				return 0, 0, false, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return 0, 0, false, false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return 0, 0, false, false
					}
				}
				s.i += 6
			default:
				return 0, 0, false, false
			}
		case c < 0x20:
			return 0, 0, false, false
		default:
			s.i++
		}
	}
	return 0, 0, false, false
}

// plainStringByte marks the bytes a string holds as they are: not a quote,
// a backslash or a control character.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads a JSON number: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func (s *jsonScan) number() bool {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	s.i = i
	return true
}
