package olap

import (
	"context"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// ReadFacts reads what a query's statement needs to know of the project's
// events (chsql.Needs): one small query per fact needed. Callers
// read them only once a cached answer could not serve.
func ReadFacts(ctx context.Context, e Engine, s chsql.Schema, projectID int64, needs chsql.Needs) (chsql.Facts, error) {
	var f chsql.Facts
	if needs.FirstEvent {
		rows, err := e.Query(ctx, s.FirstEventStatement(projectID))
		if err != nil {
			return f, err
		}
		if len(rows.Data) > 0 {
			if t, ok := rows.Data[0][0].(time.Time); ok {
				f.FirstEvent = t
			}
		}
	}
	if needs.PersonOverrides {
		rows, err := e.Query(ctx, s.PersonOverridesStatement(projectID))
		if err != nil {
			return f, err
		}
		f.NoPersonOverrides = len(rows.Data) == 0
	}
	return f, nil
}
