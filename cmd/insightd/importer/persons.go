package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/google/uuid"
)

// correctionSpace makes the uuids of the events the importer writes
// itself (version 5 of what they say), so a re-run sends the same uuid
// and the target's dedup keeps one.
var correctionSpace = uuid.MustParse("5b0b6a3e-3f0e-4c55-9a55-6c3c2d1e0f41")

func correctionUUID(parts ...string) string {
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return uuid.NewSHA1(correctionSpace, b.Bytes()).String()
}

// person is a person as PostHog's persons list answers one.
type person struct {
	UUID        string          `json:"uuid"`
	ID          json.RawMessage `json:"id"`
	DistinctIDs []string        `json:"distinct_ids"`
	Properties  json.RawMessage `json:"properties"`
	CreatedAt   string          `json:"created_at"`
}

// listPersons reads every person of c's project.
func listPersons(ctx context.Context, c *Client, fn func(*person) error) error {
	return c.List(ctx, "persons/?limit=1000", func(raw json.RawMessage) error {
		var p person
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("a person of the list cannot be read (%v): %.200s", err, raw)
		}
		if p.UUID == "" {
			var s string
			if json.Unmarshal(p.ID, &s) == nil {
				p.UUID = s
			}
		}
		return fn(&p)
	})
}

// copyPersons makes each of the source's persons one person of the
// target with all its distinct ids and its properties. The copied events
// carry the $identify and $set that made them in the source, so most are
// alike already; for the others (persons whose events were not copied,
// --since, properties set through the API) it sends $merge_dangerously
// events joining the distinct ids and a $set with the properties, under
// uuids derived from what they say so a re-run adds nothing.
func (im *Importer) copyPersons(ctx context.Context) error {
	type tperson struct {
		uuid  string
		props any
	}
	target := map[string]*tperson{}
	if !im.cfg.DryRun {
		err := listPersons(ctx, im.dst, func(p *person) error {
			tp := &tperson{uuid: p.UUID}
			if err := json.Unmarshal(p.Properties, &tp.props); err != nil {
				return fmt.Errorf("the target's person %s: properties: %w", p.UUID, err)
			}
			for _, d := range p.DistinctIDs {
				target[d] = tp
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading the target's persons: %w", err)
		}
	}
	var fixes []Event
	err := listPersons(ctx, im.src, func(p *person) error {
		if len(p.DistinctIDs) == 0 {
			return nil
		}
		im.report.Persons.Total++
		if im.cfg.DryRun {
			return nil
		}
		var props map[string]any
		if len(p.Properties) > 0 && string(p.Properties) != "null" {
			if err := json.Unmarshal(p.Properties, &props); err != nil {
				return fmt.Errorf("the source's person %s: properties: %w", p.UUID, err)
			}
		}
		if props == nil {
			props = map[string]any{}
		}
		ts := time.Now().UTC().Format(time.RFC3339Nano)
		if t, err := parseTime(p.CreatedAt); err == nil {
			ts = t.Format(time.RFC3339Nano)
		}
		primary := p.DistinctIDs[0]
		main := target[primary]
		fixed := false
		for _, d := range p.DistinctIDs[1:] {
			if t := target[d]; main != nil && t == main {
				continue
			}
			fixes = append(fixes, Event{UUID: correctionUUID("merge", p.UUID, primary, d), Event: "$merge_dangerously",
				DistinctID: primary, Timestamp: ts, Properties: mustJSON(map[string]any{"alias": d})})
			fixed = true
		}
		var have map[string]any
		if main != nil {
			have, _ = main.props.(map[string]any)
		}
		if main == nil || !reflect.DeepEqual(normalize(props), normalize(have)) {
			var unset []string
			for k := range have {
				if _, ok := props[k]; !ok {
					unset = append(unset, k)
				}
			}
			sort.Strings(unset)
			body := map[string]any{"$set": props}
			if len(unset) > 0 {
				body["$unset"] = unset
			}
			b := mustJSON(body)
			fixes = append(fixes, Event{UUID: correctionUUID("set", p.UUID, string(b)), Event: "$set",
				DistinctID: primary, Timestamp: ts, Properties: b})
			fixed = true
		}
		if fixed {
			im.report.Persons.Copied++
		} else {
			im.report.Persons.Kept++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the source's persons: %w", err)
	}
	im.report.Corrections += int64(len(fixes))
	if len(fixes) > 0 {
		im.log("persons: sending corrections", "events", len(fixes))
	}
	return im.capture(ctx, fixes)
}

// normalize makes two decoded JSON values comparable whatever the
// number types (nil and empty objects alike).
func normalize(m map[string]any) any {
	if len(m) == 0 {
		return map[string]any{}
	}
	b, _ := json.Marshal(m)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of decoded JSON values are marshaled
	}
	return b
}
