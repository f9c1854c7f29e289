package analysis

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// Query runs a statement a user of the project asked for (an events
// list, persons, property values): under the server's engine limits, in
// the project's fair share of the engine and under a query id of the
// project, as analyses run. Without a project it would take the
// connections kept for capture and readiness, and one project's slow
// lists could hold every one of them.
func (s *Service) Query(ctx context.Context, projectID int64, stmt querybuilder.Statement) (*olap.Rows, error) {
	return s.QueryAs(ctx, projectID, ProjectQueryID(projectID, uuid.NewString()), stmt)
}

// QueryAs is Query under queryID (ClientQueryID: the project's id of a
// client's client_query_id), so that insights/cancel finds it.
func (s *Service) QueryAs(ctx context.Context, projectID int64, queryID string, stmt querybuilder.Statement) (*olap.Rows, error) {
	ctx = olap.WithProject(olap.WithQueryID(ctx, queryID), projectID)
	return s.engine.Query(ctx, querybuilder.WithLimits(stmt, s.cfg.Limits))
}

// UserContext marks ctx's statements as the project's, each under a fresh
// query id of the project.
func UserContext(ctx context.Context, projectID int64) context.Context {
	return olap.WithProject(olap.WithQueryID(ctx, ProjectQueryID(projectID, uuid.NewString())), projectID)
}

// BackgroundExec runs a statement of the project's background work
// (cohort calculation) like Query, with limits l, waiting its turn
// when the project's analyses hold its share of the engine: background
// work has no client to answer 429 to.
func (s *Service) BackgroundExec(ctx context.Context, projectID int64, stmt querybuilder.Statement, l querybuilder.Limits) error {
	stmt = querybuilder.WithLimits(stmt, l)
	for {
		err := s.engine.Exec(UserContext(ctx, projectID), stmt)
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

// BackgroundLimits are the limits of background statements that write
// rows rather than answer them: no bound on result rows (a cohort may
// have millions of members), the others as for analyses.
func (s *Service) BackgroundLimits() querybuilder.Limits {
	l := s.cfg.Limits
	l.MaxResultRows = 0
	return l
}
