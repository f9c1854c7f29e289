package metadata

import (
	"context"
)

// TokenProject is what the capture endpoints need of the project a
// project api token opens.
type TokenProject struct {
	ID            int64 `db:"id"`
	IngestedEvent bool  `db:"ingested_event"`
	AnonymizeIPs  bool  `db:"anonymize_ips"`
	// What the browser SDK's remote configuration tells it.
	AutocaptureOptOut          bool `db:"autocapture_opt_out"`
	AutocaptureExceptionsOptIn bool `db:"autocapture_exceptions_opt_in"`
	CapturePerformanceOptIn    bool `db:"capture_performance_opt_in"`
	HeatmapsOptIn              bool `db:"heatmaps_opt_in"`
}

// ProjectForToken finds the project of a capture token; ErrNotFound for
// an unknown one. Answers are cached like keys (Config.AuthCacheTTL): a
// token replaced by a reset keeps working until its entry expires.
func (s *Store) ProjectForToken(ctx context.Context, token string) (TokenProject, error) {
	if p, ok := s.tokens.get(token); ok {
		return p, nil
	}
	var p TokenProject
	if err := s.getOne(ctx, nil, &p, `SELECT id, ingested_event, anonymize_ips, autocapture_opt_out,
		autocapture_exceptions_opt_in, capture_performance_opt_in, heatmaps_opt_in FROM projects WHERE api_token = $1`, token); err != nil {
		return p, err
	}
	s.tokens.put(token, p)
	return p, nil
}

// MarkIngested records that a project has received its first event; token,
// when known, refreshes the capture cache.
func (s *Store) MarkIngested(ctx context.Context, projectID int64, token string) error {
	st, err := s.prepared(ctx, "UPDATE projects SET ingested_event = true WHERE id = $1 AND NOT ingested_event")
	if err != nil {
		return err
	}
	if _, err := st.ExecContext(ctx, projectID); err != nil {
		return err
	}
	if token != "" {
		if p, ok := s.tokens.get(token); ok {
			p.IngestedEvent = true
			s.tokens.put(token, p)
		}
	}
	return nil
}
