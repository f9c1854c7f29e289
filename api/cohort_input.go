package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/insightd/insightd/api/httpx"
)

// Bounds on listed persons.
const (
	maxStaticPersons = 1_000_000
	maxDistinctIDLen = 200
)

// distinctIDsFromCSV reads a static cohort's csv: distinct ids in the
// column headed distinct_id (or the first column when no header names
// it). A bad row is a 400 naming its line; nothing is stored then.
func distinctIDsFromCSV(r io.Reader) ([]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	col, first := 0, true
	var out []string
	seen := map[string]bool{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// Lines of the file, as an editor numbers them (the reader
			// skips blank lines).
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.StartLine
			}
			return nil, httpx.Invalid("csv", fmt.Sprintf("Line %d of the csv cannot be read: %v", line, err))
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			header := false
			for i, h := range rec {
				if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), "distinct_id") {
					col, header = i, true
				}
			}
			if header {
				continue
			}
		}
		if col >= len(rec) {
			return nil, httpx.Invalid("csv", fmt.Sprintf("Line %d of the csv has no column %d.", line, col+1))
		}
		id := strings.TrimSpace(strings.TrimPrefix(rec[col], "\ufeff"))
		if problem := checkDistinctID(id); problem != "" {
			return nil, httpx.Invalid("csv", fmt.Sprintf("Line %d of the csv: %s", line, problem))
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
		if len(out) > maxStaticPersons {
			return nil, httpx.Invalid("csv", fmt.Sprintf("At most %d persons in a cohort.", maxStaticPersons))
		}
	}
	if len(out) == 0 {
		return nil, httpx.Invalid("csv", "The csv lists no distinct ids.")
	}
	return out, nil
}

// distinctIDList reads persons: a list of distinct ids.
func distinctIDList(raw json.RawMessage) ([]string, error) {
	var items []any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a numeric distinct id is its JSON text, as capture keeps it
	if err := dec.Decode(&items); err != nil {
		return nil, httpx.Invalid("persons", "persons must be a list of distinct ids.")
	}
	if len(items) > maxStaticPersons {
		return nil, httpx.Invalid("persons", fmt.Sprintf("At most %d persons in a cohort.", maxStaticPersons))
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		id := ""
		switch x := it.(type) {
		case string:
			id = x
		case json.Number:
			id = string(x)
		case map[string]any: // {"distinct_id": ...} or a person's distinct_ids
			if d, ok := x["distinct_id"].(string); ok {
				id = d
			}
		}
		if problem := checkDistinctID(id); problem != "" {
			return nil, httpx.Invalid("persons", fmt.Sprintf("persons[%d]: %s", i, problem))
		}
		out = append(out, id)
	}
	return out, nil
}

func checkDistinctID(id string) string {
	switch {
	case id == "":
		return "a distinct id is empty."
	case !utf8.ValidString(id) || strings.ContainsRune(id, 0):
		return "a distinct id holds invalid UTF-8 or a NUL character."
	case len(id) > maxDistinctIDLen:
		return fmt.Sprintf("a distinct id is at most %d characters.", maxDistinctIDLen)
	}
	return ""
}
