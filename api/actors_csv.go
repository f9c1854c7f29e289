package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// exportActors answers format=csv for the actors behind a number: every
// one of them, in one engine statement (the kind's actors joined to their
// details, which are read once) whose rows are written to the response
// as the engine hands them over: the export is never held whole, in Go
// or in a buffer. Columns are fixed before the first row: a person's
// properties are one cell of JSON text (their keys vary from person to
// person, and a header naming them all would need every row first).
func (s *Server) exportActors(c *gin.Context, p *metadata.Project, lister querybuilder.ActorsLister, params querybuilder.Params, f querybuilder.Facts, typ querybuilder.ActorType) {
	stmt, err := lister.Actors(params, f, querybuilder.Page{Details: &typ})
	if err != nil {
		writeError(c, err)
		return
	}
	// The export lists every actor: no result-row cap, the other limits
	// as for any analysis.
	limits := s.cfg.Limits
	limits.MaxResultRows = 0
	names := []string(p.PersonDisplayNameProperties)
	if len(names) == 0 {
		names = defaultDisplayNames
	}
	details := len(querybuilder.DetailColumns(typ))
	var w *csv.Writer
	var extra int
	record := []string{}
	err = s.engine.Stream(userContext(c.Request.Context(), p.ID), querybuilder.WithLimits(stmt, limits),
		func(cols []olap.Column) error {
			var header []string
			for _, col := range cols[1 : len(cols)-details] {
				header = append(header, col.Name)
			}
			extra = len(header)
			header = append(actorHeader(typ), header...)
			c.Header("Content-Type", "text/csv; charset=utf-8")
			c.Status(http.StatusOK)
			w = csv.NewWriter(c.Writer)
			return w.Write(header)
		},
		func(row []any) error {
			record = actorRecord(record[:0], typ, names, row, extra)
			return w.Write(record)
		})
	if err != nil {
		if w == nil {
			writeError(c, err)
			return
		}
		// The status and part of the rows are out: end the response
		// broken (no final chunk) so that the client cannot take what it
		// got for the whole export.
		s.log.Error("actors export failed part way", "request_id", c.GetString("request_id"), "err", err)
		panic(http.ErrAbortHandler)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		s.log.Warn("actors export: writing the response", "request_id", c.GetString("request_id"), "err", err)
	}
}

// actorHeader names an export's columns before the kind's own (retention's
// appearances): those of the JSON answer's actors.
func actorHeader(typ querybuilder.ActorType) []string {
	switch typ.Kind {
	case querybuilder.ActorGroup:
		return []string{"id", "group_key", "group_type_index", "group_properties", "created_at", "type"}
	case querybuilder.ActorSession:
		return []string{"id", "session_id", "type"}
	}
	return []string{"id", "uuid", "name", "distinct_ids", "properties", "created_at", "is_identified"}
}

// actorRecord is an export's row for an engine row of the details
// statement: the actor, extra columns of the kind, then its details
// (querybuilder.DetailColumns). Cells follow the JSON answer's values:
// lists and objects as JSON text, a missing time empty.
func actorRecord(out []string, typ querybuilder.ActorType, names []string, row []any, extra int) []string {
	id, _ := row[0].(string)
	kind := make([]string, extra)
	for i := range kind {
		kind[i] = cell(row[1+i])
	}
	d := row[1+extra:]
	switch typ.Kind {
	case querybuilder.ActorSession:
		out = append(out, id, id, "session")
	case querybuilder.ActorGroup:
		props, _ := d[0].(string)
		if !json.Valid([]byte(props)) {
			props = "{}"
		}
		created, _ := d[1].(time.Time)
		out = append(out, id, id, strconv.Itoa(typ.GroupTypeIndex), props, timeCell(created), "group")
	default:
		person := goneperson(id)
		if props, _ := d[0].(string); props != "" && json.Valid([]byte(props)) {
			person.Properties = json.RawMessage(props)
		}
		person.CreatedAt, _ = d[1].(time.Time)
		identified, _ := d[2].(uint64)
		for _, x := range asList(d[3]) {
			if ds, ok := x.(string); ok {
				person.DistinctIDs = append(person.DistinctIDs, ds)
			}
		}
		person.Name = exportName(person, names)
		distinct, _ := json.Marshal(person.DistinctIDs)
		out = append(out, id, id, person.Name, string(distinct), string(person.Properties), timeCell(person.CreatedAt),
			strconv.FormatBool(identified == 1))
	}
	return append(out, kind...)
}

// exportName is displayName at an export's pace (it was a quarter of the
// export's Go time, decoding every property of every person): a name
// whose key does not appear in the properties' text is not there, and
// one that does is read without decoding the other values.
func exportName(p personJSON, names []string) string {
	var props map[string]json.RawMessage
	for _, n := range names {
		key, _ := json.Marshal(n)
		if string(key) == `"`+n+`"` && !bytes.Contains(p.Properties, key) {
			continue // the key as our writer's json.Marshal writes it is absent
		}
		if props == nil && json.Unmarshal(p.Properties, &props) != nil {
			break
		}
		var v string
		if raw, ok := props[n]; ok && json.Unmarshal(raw, &v) == nil && v != "" {
			return v
		}
	}
	if len(p.DistinctIDs) > 0 {
		return p.DistinctIDs[0]
	}
	return p.ID
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// cell is an engine value as a cell: text as it is, anything else as
// JSON text.
func cell(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func timeCell(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
