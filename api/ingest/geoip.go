package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/insightd/insightd/olap"
)

// GeoIP locates events by the address they were sent from, in a
// MaxMind-format city or country database the user downloads (GeoLite2,
// DB-IP Lite). Capture adds what it finds as $geoip_* properties and,
// when asked (Config.GeoIPPersons), sets the person's $geoip_* and
// $initial_geoip_* as PostHog's GeoIP transformation does: that makes
// every event a person update, and each flush writes a person row for
// every person it saw (benchmarks/results/geoip.md has the cost).
type GeoIP struct {
	db *maxminddb.Reader

	mu sync.Mutex
	// seen keeps the latest addresses' places (nil: not in the database),
	// at most geoCacheSize, emptied when full: an app's users send many
	// events from one address, and a lookup decodes a record.
	seen map[string]*location
}

const geoCacheSize = 1 << 16

// OpenGeoIP opens the database at path.
func OpenGeoIP(path string) (*GeoIP, error) {
	db, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("geoip database %s: %w", path, err)
	}
	if t := db.Metadata.DatabaseType; !strings.Contains(t, "City") && !strings.Contains(t, "Country") {
		_ = db.Close()
		return nil, fmt.Errorf("geoip database %s is a %q database, not a city or country one", path, t)
	}
	return &GeoIP{db: db, seen: map[string]*location{}}, nil
}

// Close releases the database.
func (g *GeoIP) Close() error { return g.db.Close() }

// geoRecord is what a city database holds (a country one, the country
// and continent only); names are read in English, as PostHog does.
type geoRecord struct {
	City struct {
		Names map[string]string `maxminddb:"names"`
	} `maxminddb:"city"`
	Continent struct {
		Code  string            `maxminddb:"code"`
		Names map[string]string `maxminddb:"names"`
	} `maxminddb:"continent"`
	Country struct {
		ISOCode string            `maxminddb:"iso_code"`
		Names   map[string]string `maxminddb:"names"`
	} `maxminddb:"country"`
	Postal struct {
		Code string `maxminddb:"code"`
	} `maxminddb:"postal"`
	Location struct {
		Latitude       *float64 `maxminddb:"latitude"`
		Longitude      *float64 `maxminddb:"longitude"`
		AccuracyRadius uint16   `maxminddb:"accuracy_radius"`
		TimeZone       string   `maxminddb:"time_zone"`
	} `maxminddb:"location"`
	Subdivisions []struct {
		ISOCode string            `maxminddb:"iso_code"`
		Names   map[string]string `maxminddb:"names"`
	} `maxminddb:"subdivisions"`
}

// geoKeys are the location's keys PostHog's transformation sets on the
// person ($geoip_<key>, null when the database says nothing, so a
// person's old city does not outlive a move) and once ($initial_geoip_).
var geoKeys = []string{"city_name", "city_confidence", "subdivision_2_name", "subdivision_2_code",
	"subdivision_1_name", "subdivision_1_code", "country_name", "country_code", "continent_name",
	"continent_code", "postal_code", "latitude", "longitude", "accuracy_radius", "time_zone"}

// location is one address's place: the keys found, in geoKeys' order,
// with their JSON values.
type location struct {
	keys   []string
	values []json.RawMessage
}

// cached is locate, remembered.
func (g *GeoIP) cached(ip string) *location {
	if len(ip) > 64 { // no address is this long: nothing to remember
		loc, _ := g.locate(ip)
		return loc
	}
	g.mu.Lock()
	loc, ok := g.seen[ip]
	g.mu.Unlock()
	if ok {
		return loc
	}
	loc, _ = g.locate(ip)
	g.mu.Lock()
	if len(g.seen) >= geoCacheSize {
		clear(g.seen)
	}
	g.seen[ip] = loc
	g.mu.Unlock()
	return loc
}

// locate finds ip; false when the database does not know it.
func (g *GeoIP) locate(ip string) (*location, bool) {
	addr, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return nil, false
	}
	var r geoRecord
	res := g.db.Lookup(addr.Unmap())
	if !res.Found() || res.Decode(&r) != nil {
		return nil, false
	}
	found := map[string]json.RawMessage{}
	str := func(key, v string) {
		if v != "" {
			found[key], _ = json.Marshal(v)
		}
	}
	str("city_name", r.City.Names["en"])
	str("country_name", r.Country.Names["en"])
	str("country_code", r.Country.ISOCode)
	str("continent_name", r.Continent.Names["en"])
	str("continent_code", r.Continent.Code)
	str("postal_code", r.Postal.Code)
	str("time_zone", r.Location.TimeZone)
	if r.Location.Latitude != nil && r.Location.Longitude != nil {
		found["latitude"] = json.RawMessage(strconv.FormatFloat(*r.Location.Latitude, 'f', -1, 64))
		found["longitude"] = json.RawMessage(strconv.FormatFloat(*r.Location.Longitude, 'f', -1, 64))
	}
	if r.Location.AccuracyRadius > 0 {
		found["accuracy_radius"] = json.RawMessage(strconv.Itoa(int(r.Location.AccuracyRadius)))
	}
	for i, sd := range r.Subdivisions {
		if i >= 2 {
			break
		}
		n := strconv.Itoa(i + 1)
		str("subdivision_"+n+"_code", sd.ISOCode)
		str("subdivision_"+n+"_name", sd.Names["en"])
	}
	if len(found) == 0 {
		return nil, false
	}
	loc := &location{}
	for _, k := range geoKeys {
		if v, ok := found[k]; ok {
			loc.keys = append(loc.keys, k)
			loc.values = append(loc.values, v)
		}
	}
	return loc, true
}

// geoHint is what locating an event needs of its properties, read with
// capture's other keys (propertyHead) rather than by decoding them again.
type geoHint struct {
	ip      string // the event's own $ip
	ownIP   bool   // it sent one (a value that is no address locates nothing)
	disable bool   // $geoip_disable is truthy
}

func hintOf(h *propertyHead) geoHint {
	var g geoHint
	if isPresent(h.IP) {
		g.ip, _ = jsonString(h.IP)
		g.ownIP = true
	}
	// Truthy as PostHog's transformation reads it (Hog): anything but
	// false, null, 0 and "".
	switch v := string(bytes.TrimSpace(h.GeoIPDisable)); v {
	case "", "null", "false", "0", `""`:
	default:
		g.disable = true
	}
	return g
}

// geoLocator locates the events of one request: most carry no $ip of
// their own and share the request's address, looked up once.
type geoLocator struct {
	g         *GeoIP
	persons   bool // set person properties too
	requestIP string
	looked    bool
	request   *location
}

// enrich adds ev's location: the event's own $ip (a server SDK's,
// forwarding its user's), else the request's address. Nothing when the
// event sets $geoip_disable, or its address is not in the database; a
// property or person property the client sent keeps its value.
func (l *geoLocator) enrich(ev *olap.Capture, h geoHint) {
	if h.disable {
		return
	}
	var loc *location
	switch {
	case h.ownIP && h.ip != l.requestIP:
		if loc = l.g.cached(h.ip); loc == nil {
			return
		}
	default:
		if !l.looked {
			l.request, l.looked = l.g.cached(l.requestIP), true
		}
		if loc = l.request; loc == nil {
			return
		}
	}
	props := ev.Properties
	ev.Properties = withLocation(props, loc)
	if !l.persons {
		return
	}
	u := ev.Person
	if u == nil {
		u = &olap.PersonUpdate{}
		ev.Person = u
	}
	if u.Set == nil {
		u.Set = map[string]json.RawMessage{}
	}
	if u.SetOnce == nil {
		u.SetOnce = map[string]json.RawMessage{}
	}
	found := make(map[string]json.RawMessage, len(loc.keys))
	for i, k := range loc.keys {
		found[k] = loc.values[i]
	}
	for _, k := range geoKeys {
		v, ok := found[k]
		if !ok {
			v = json.RawMessage("null")
		}
		if _, sent := u.Set["$geoip_"+k]; !sent {
			u.Set["$geoip_"+k] = v
		}
		if _, sent := u.SetOnce["$initial_geoip_"+k]; ok && !sent {
			u.SetOnce["$initial_geoip_"+k] = v
		}
	}
}

// withLocation adds loc's keys as $geoip_* properties to props, an
// object's text, keeping any the client sent. When it sent none (the
// usual case) they are spliced into the text rather than decoding it.
func withLocation(props string, loc *location) string {
	if strings.Contains(props, `$geoip_`) || strings.Contains(props, `\u`) {
		m := map[string]json.RawMessage{}
		if json.Unmarshal([]byte(props), &m) != nil {
			return props
		}
		for i, k := range loc.keys {
			if _, sent := m["$geoip_"+k]; !sent {
				m["$geoip_"+k] = loc.values[i]
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return props
		}
		return string(b)
	}
	var b strings.Builder
	b.Grow(len(props) + 40*len(loc.keys))
	b.WriteByte('{')
	for i, k := range loc.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"$geoip_`)
		b.WriteString(k)
		b.WriteString(`":`)
		b.Write(loc.values[i])
	}
	rest := strings.TrimSpace(props[1:])
	if rest != "}" {
		b.WriteByte(',')
	}
	b.WriteString(rest)
	return b.String()
}
