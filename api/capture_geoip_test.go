package api

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/insightd/insightd/api/ingest"
	"github.com/insightd/insightd/querybuilder"
)

// writeGeoIPDB writes a small MaxMind-format database of the given type
// with MaxMind's own writer: httptest's 192.0.2.0/24 in Stockholm (a
// full city record), 203.0.113.0/24 in Japan (a country alone) and
// 2001:db8::/32 in Germany.
func writeGeoIPDB(t *testing.T, dbType string) string {
	t.Helper()
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType, RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	names := func(en string) mmdbtype.Map {
		return mmdbtype.Map{"en": mmdbtype.String(en), "de": mmdbtype.String("x-" + en)}
	}
	records := map[string]mmdbtype.Map{
		"192.0.2.0/24": {
			"city":      mmdbtype.Map{"names": names("Stockholm")},
			"continent": mmdbtype.Map{"code": mmdbtype.String("EU"), "names": names("Europe")},
			"country":   mmdbtype.Map{"iso_code": mmdbtype.String("SE"), "names": names("Sweden")},
			"postal":    mmdbtype.Map{"code": mmdbtype.String("100 05")},
			"location": mmdbtype.Map{"latitude": mmdbtype.Float64(59.3293), "longitude": mmdbtype.Float64(18.0686),
				"accuracy_radius": mmdbtype.Uint16(20), "time_zone": mmdbtype.String("Europe/Stockholm")},
			"subdivisions": mmdbtype.Slice{mmdbtype.Map{"iso_code": mmdbtype.String("AB"), "names": names("Stockholm County")}},
		},
		"203.0.113.0/24": {
			"continent": mmdbtype.Map{"code": mmdbtype.String("AS"), "names": names("Asia")},
			"country":   mmdbtype.Map{"iso_code": mmdbtype.String("JP"), "names": names("Japan")},
		},
		"2001:db8::/32": {
			"country": mmdbtype.Map{"iso_code": mmdbtype.String("DE"), "names": names("Germany")},
		},
	}
	for cidr, r := range records {
		_, network, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(network, r); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "city.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenGeoIPRefusesWhatIsNotALocationDatabase(t *testing.T) {
	if _, err := ingest.OpenGeoIP(filepath.Join(t.TempDir(), "missing.mmdb")); err == nil {
		t.Fatal("a missing file opened")
	}
	if _, err := ingest.OpenGeoIP(writeGeoIPDB(t, "GeoLite2-ASN")); err == nil {
		t.Fatal("an ASN database opened as a location database")
	}
	for _, typ := range []string{"GeoLite2-City", "GeoLite2-Country", "DBIP-City-Lite"} {
		g, err := ingest.OpenGeoIP(writeGeoIPDB(t, typ))
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		g.Close()
	}
}

// Capture locates each event by its own $ip or the request's address,
// as PostHog's GeoIP transformation: $geoip_* on the event, $geoip_* (null
// where the database says nothing) and $initial_geoip_* on the person;
// never what the client sent itself, never with $geoip_disable or for a
// project that anonymizes IPs.
func TestCaptureAddsGeoIPProperties(t *testing.T) {
	g, err := ingest.OpenGeoIP(writeGeoIPDB(t, "GeoLite2-City"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	cfg := testConfig()
	cfg.GeoIP, cfg.GeoIPPersons = g, true
	f := newCaptureFixture(t, cfg)
	send := func(events ...obj) {
		t.Helper()
		if code, body := f.send(t, req{path: "/batch/", body: mustJSON(t, obj{"api_key": f.token, "batch": events})}); code != 200 {
			t.Fatalf("want 200, got %d %v", code, body)
		}
	}
	props := func(event string) map[string]any { t.Helper(); return storedProps(t, f, event) }
	person := func(distinctID string) map[string]any { t.Helper(); return personProps(t, f, distinctID) }
	geoKeys := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "$geoip_disable" && (strings.HasPrefix(k, "$geoip_") || strings.HasPrefix(k, "$initial_geoip_")) {
				out[k] = v
			}
		}
		return out
	}
	want := func(what string, got map[string]any, wants map[string]any) {
		t.Helper()
		for k, v := range wants {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v (all: %v)", what, k, got[k], v, geoKeys(got))
			}
		}
	}

	send(obj{"event": "from-request", "distinct_id": "ada", "timestamp": "2026-04-01T10:00:00Z"})
	want("the request's address", props("from-request"), map[string]any{
		"$geoip_city_name": "Stockholm", "$geoip_country_name": "Sweden", "$geoip_country_code": "SE",
		"$geoip_continent_name": "Europe", "$geoip_continent_code": "EU", "$geoip_postal_code": "100 05",
		"$geoip_latitude": 59.3293, "$geoip_longitude": 18.0686, "$geoip_accuracy_radius": float64(20),
		"$geoip_time_zone": "Europe/Stockholm", "$geoip_subdivision_1_code": "AB",
		"$geoip_subdivision_1_name": "Stockholm County", "$ip": "192.0.2.1"})
	if _, ok := props("from-request")["$geoip_subdivision_2_code"]; ok {
		t.Error("an event carries only what the database knows")
	}
	want("the person", person("ada"), map[string]any{"$geoip_country_code": "SE", "$geoip_city_name": "Stockholm",
		"$initial_geoip_country_code": "SE", "$initial_geoip_city_name": "Stockholm"})
	if p := person("ada"); p["$geoip_city_confidence"] != nil || !hasKey(p, "$geoip_city_confidence") {
		t.Errorf("a key the database does not give is set to null on the person, got %v", geoKeys(p))
	}

	// A later event from an address in Japan only: the person's city is
	// cleared, the initial one stays.
	send(obj{"event": "own-ip", "distinct_id": "ada", "timestamp": "2026-04-01T11:00:00Z", "properties": obj{"$ip": "203.0.113.9"}})
	want("the event's own $ip", props("own-ip"), map[string]any{"$geoip_country_code": "JP", "$geoip_continent_code": "AS", "$ip": "203.0.113.9"})
	if _, ok := props("own-ip")["$geoip_city_name"]; ok {
		t.Error("a country-only address gave a city")
	}
	want("the person after a move", person("ada"), map[string]any{"$geoip_country_code": "JP", "$geoip_city_name": nil,
		"$initial_geoip_country_code": "SE", "$initial_geoip_city_name": "Stockholm"})

	send(obj{"event": "v6", "distinct_id": "bob", "properties": obj{"$ip": "2001:db8::42"}})
	want("an IPv6 address", props("v6"), map[string]any{"$geoip_country_code": "DE"})

	// What the client sent wins.
	send(obj{"event": "client-sent", "distinct_id": "cy", "properties": obj{"$geoip_country_code": "XX",
		"$set": obj{"$geoip_city_name": "Atlantis"}, "$set_once": obj{"$initial_geoip_country_code": "YY"}}})
	want("the client's properties", props("client-sent"), map[string]any{"$geoip_country_code": "XX", "$geoip_city_name": "Stockholm"})
	want("the client's person properties", person("cy"), map[string]any{"$geoip_city_name": "Atlantis",
		"$initial_geoip_country_code": "YY", "$geoip_country_code": "SE"})

	// Nothing for $geoip_disable, an unknown or hostile address.
	send(obj{"event": "disabled", "distinct_id": "dee", "properties": obj{"$geoip_disable": true}},
		obj{"event": "unknown", "distinct_id": "eve", "properties": obj{"$ip": "198.51.100.7"}},
		obj{"event": "hostile", "distinct_id": "fay", "properties": obj{"$ip": "'; DROP TABLE events; --\u0000"}})
	send(obj{"event": "disabled-text", "distinct_id": "dee", "properties": obj{"$geoip_disable": "yes"}},
		obj{"event": "not-disabled", "distinct_id": "ida", "properties": obj{"$geoip_disable": false}})
	want("$geoip_disable false", props("not-disabled"), map[string]any{"$geoip_country_code": "SE"})
	for _, c := range []struct{ event, distinctID string }{{"disabled", "dee"}, {"disabled-text", "dee"}, {"unknown", "eve"}, {"hostile", "fay"}} {
		if got := geoKeys(props(c.event)); len(got) != 0 {
			t.Errorf("%s: event located: %v", c.event, got)
		}
		if got := geoKeys(person(c.distinctID)); len(got) != 0 {
			t.Errorf("%s: person located: %v", c.event, got)
		}
	}

	// Without GeoIPPersons, events are located and persons left alone.
	cfg.GeoIPPersons = false
	alone := newCaptureFixture(t, cfg)
	if code, body := alone.send(t, req{path: "/batch/", body: mustJSON(t, obj{"api_key": alone.token, "batch": []obj{{"event": "e", "distinct_id": "hal"}}})}); code != 200 {
		t.Fatalf("want 200, got %d %v", code, body)
	}
	want("events alone", storedProps(t, alone, "e"), map[string]any{"$geoip_country_code": "SE"})
	if got := geoKeys(personProps(t, alone, "hal")); len(got) != 0 {
		t.Errorf("a person was located without GeoIPPersons: %v", got)
	}

	if _, err := f.s.store.DB().Exec("UPDATE projects SET anonymize_ips = true WHERE id = $1", f.team); err != nil {
		t.Fatal(err)
	}
	send(obj{"event": "anonymized", "distinct_id": "gus", "properties": obj{"$ip": "203.0.113.9"}})
	if got := geoKeys(props("anonymized")); len(got) != 0 {
		t.Errorf("a project that anonymizes IPs is not located, got %v", got)
	}
}

// storedProps are the properties of f's one event named event.
func storedProps(t *testing.T, f *captureFixture, event string) map[string]any {
	t.Helper()
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL:    "SELECT properties FROM events WHERE team_id = {team:Int64} AND event = {e:String}",
		Params: obj{"team": f.team, "e": event}})
	if err != nil || len(rows.Data) != 1 {
		t.Fatalf("%s: %v %v", event, err, rows)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(rows.Data[0][0].(string)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// personProps are the properties of the person of distinctID in f's
// project (none when it has no person).
func personProps(t *testing.T, f *captureFixture, distinctID string) map[string]any {
	t.Helper()
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL: `SELECT argMax(properties, version) FROM persons WHERE team_id = {team:Int64} AND id IN
(SELECT argMax(person_id, version) FROM person_distinct_id WHERE team_id = {team:Int64} AND distinct_id = {d:String})
GROUP BY id`, Params: obj{"team": f.team, "d": distinctID}})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if len(rows.Data) == 1 {
		if err := json.Unmarshal([]byte(rows.Data[0][0].(string)), &m); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}
