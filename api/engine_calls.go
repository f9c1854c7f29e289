package api

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// userQuery runs a statement a user of the project asked for (an events
// list, persons, property values): under the server's engine limits, in
// the project's fair share of the engine and under a query id of the
// project, as analyses run. Without a project it would take the
// connections kept for capture and readiness, and one project's slow
// lists could hold every one of them.
func (s *Server) userQuery(ctx context.Context, projectID int64, stmt querybuilder.Statement) (*olap.Rows, error) {
	return s.userQueryAs(ctx, projectID, projectQueryID(projectID, uuid.NewString()), stmt)
}

// userQueryAs is userQuery under queryID (analysisQueryID: the project's
// id of a client's client_query_id), so that insights/cancel finds it.
func (s *Server) userQueryAs(ctx context.Context, projectID int64, queryID string, stmt querybuilder.Statement) (*olap.Rows, error) {
	ctx = olap.WithProject(olap.WithQueryID(ctx, queryID), projectID)
	return s.engine.Query(ctx, querybuilder.WithLimits(stmt, s.cfg.Limits))
}

// userContext marks ctx's statements as the project's, each under a fresh
// query id of the project.
func userContext(ctx context.Context, projectID int64) context.Context {
	return olap.WithProject(olap.WithQueryID(ctx, projectQueryID(projectID, uuid.NewString())), projectID)
}

// backgroundExec runs a statement of the project's background work
// (cohort calculation) like userQuery, with limits l, waiting its turn
// when the project's analyses hold its share of the engine: background
// work has no client to answer 429 to.
func (s *Server) backgroundExec(ctx context.Context, projectID int64, stmt querybuilder.Statement, l querybuilder.Limits) error {
	stmt = querybuilder.WithLimits(stmt, l)
	for {
		err := s.engine.Exec(userContext(ctx, projectID), stmt)
		var te *olap.ThrottledError
		if !errors.As(err, &te) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(te.RetryAfter):
		}
	}
}

// backgroundLimits are the limits of background statements that write
// rows rather than answer them: no bound on result rows (a cohort may
// have millions of members), the others as for analyses.
func (s *Server) backgroundLimits() querybuilder.Limits {
	l := s.cfg.Limits
	l.MaxResultRows = 0
	return l
}
