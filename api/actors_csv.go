package api

import (
	"context"
	"encoding/csv"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// exportActors answers format=csv for the actors behind a number: every
// one of them, in one engine statement (the kind's actors joined to their
// details, which are read once, each column a cell's text) whose rows are
// written to the response as the engine hands them over: the export is
// never held whole, in Go or in a buffer. Columns are fixed before the
// first row: a person's properties are one cell of JSON text (their keys
// vary from person to person, and a header naming them all would need
// every row first).
func (s *Server) exportActors(c *gin.Context, p *metadata.Project, a *analysis.Actors) {
	typ := a.Type
	names := []string(p.PersonDisplayNameProperties)
	if len(names) == 0 {
		names = defaultDisplayNames
	}
	stmt, err := a.Lister.Actors(a.Params, a.Facts, querybuilder.Page{Details: &typ, DisplayNames: names})
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	// The export lists every actor: no result-row cap, the other limits
	// as for any analysis.
	limits := s.cfg.Limits
	limits.MaxResultRows = 0
	if e, ok := s.engine.(csvStreamer); ok {
		s.exportCSV(c, e, p, querybuilder.WithLimits(stmt, limits), typ)
		return
	}
	var w *csv.Writer
	var record []string
	start := func(header []string) error {
		record = make([]string, len(header))
		c.Header("Content-Type", "text/csv; charset=utf-8")
		c.Status(http.StatusOK)
		w = csv.NewWriter(c.Writer)
		return w.Write(header)
	}
	err = s.engine.Stream(analysis.UserContext(c.Request.Context(), p.ID), querybuilder.WithLimits(stmt, limits),
		func(cols []olap.Column) error {
			header := make([]string, len(cols))
			for i, col := range cols {
				header[i] = col.Name
			}
			return start(header)
		},
		func(row []any) error {
			for i, v := range row {
				record[i], _ = v.(string)
			}
			return w.Write(record)
		})
	if !s.endExport(c, w != nil, err, typ, start) {
		return
	}
	w.Flush()
	if err := w.Error(); err != nil {
		s.log.Warn("actors export: writing the response", "request_id", c.GetString("request_id"), "err", err)
	}
}

// csvStreamer is an engine that writes a statement's rows as CSV itself
// (the embedded one: olap.Embedded.StreamCSV).
type csvStreamer interface {
	StreamCSV(ctx context.Context, stmt querybuilder.Statement, w io.Writer) (bool, error)
}

// exportCSV is exportActors through the engine's own CSV: its bytes go to
// the response as they come, with no row decoded in Go (an export of
// 600 000 persons spent most of its time decoding and re-encoding).
func (s *Server) exportCSV(c *gin.Context, e csvStreamer, p *metadata.Project, stmt querybuilder.Statement, typ querybuilder.ActorType) {
	w := &startOnWrite{c: c}
	wrote, err := e.StreamCSV(analysis.UserContext(c.Request.Context(), p.ID), stmt, w)
	s.endExport(c, wrote, err, typ, func(header []string) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
}

// endExport ends an export whose rows are out (started) or not. An error
// before the first row is the request's; one part way ends the response
// broken (no final chunk) so that the client cannot take what it got for
// the whole export. An export of no actors may come without its columns
// (a chunked reader names them with the first chunk of rows): it is the
// header of the kind's actor type, written by start. It answers whether
// the export may finish normally.
func (s *Server) endExport(c *gin.Context, started bool, err error, typ querybuilder.ActorType, start func(header []string) error) bool {
	if err != nil {
		if !started {
			httpx.WriteError(c, err)
			return false
		}
		s.log.Error("actors export failed part way", "request_id", c.GetString("request_id"), "err", err)
		panic(http.ErrAbortHandler)
	}
	if !started {
		if err := start(querybuilder.ExportColumns(typ)); err != nil {
			s.log.Warn("actors export: writing the response", "request_id", c.GetString("request_id"), "err", err)
			return false
		}
	}
	return true
}

// startOnWrite sets the CSV answer's headers and status on its first write.
type startOnWrite struct {
	c       *gin.Context
	started bool
}

func (w *startOnWrite) Write(b []byte) (int, error) {
	if !w.started {
		w.started = true
		w.c.Header("Content-Type", "text/csv; charset=utf-8")
		w.c.Status(http.StatusOK)
	}
	return w.c.Writer.Write(b)
}
