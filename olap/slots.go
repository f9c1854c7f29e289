package olap

// ProjectSlots is how many analyses one project runs at once on the
// embedded engine: a caller fanning out a project's analyses (a
// dashboard's tiles) runs no more than this, so none of them waits out
// the engine's queueing time behind its siblings.
func (e *Embedded) ProjectSlots() int { return e.fair.perProject }

// ProjectSlots is how many analyses one project runs at once on the
// ClickHouse server (see Embedded.ProjectSlots).
func (s *Server) ProjectSlots() int { return s.fair.perProject }
