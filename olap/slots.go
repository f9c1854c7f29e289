package olap

// ProjectSlots is how many analyses one project runs at once on the
// embedded engine: a caller fanning out a project's analyses (a
// dashboard's tiles) runs no more than this, so none of them waits out
// the engine's queueing time behind its siblings.
func (e *Embedded) ProjectSlots() int { return e.fair.perProject }

// ProjectSlots is how many analyses one project runs at once on the
// ClickHouse server (see Embedded.ProjectSlots).
func (s *Server) ProjectSlots() int { return s.fair.perProject }

// Statements is how many statements run in the embedded engine and how
// many wait for their project's slot or a connection (for metrics).
func (e *Embedded) Statements() (running, queued int) { return e.fair.calls.counts() }

// Statements is how many statements run on the ClickHouse server and how
// many wait for their project's slot (for metrics).
func (s *Server) Statements() (running, queued int) { return s.fair.calls.counts() }
