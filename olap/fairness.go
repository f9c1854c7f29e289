package olap

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Analyses are the statements a project's users ask for (trends, funnels,
// persons...): long, and as many as clients send. They run under a project
// (WithProject) and share the engine fairly: at most a share of its
// statement slots per project, so one project's abandoned funnels cannot
// hold every slot, and never the slots kept for ingestion and readiness
// (statements without a project: inserts, pings, small lookups).

type projectKey struct{}

// WithProject marks the statements of ctx as an analysis of the project.
func WithProject(ctx context.Context, projectID int64) context.Context {
	return context.WithValue(ctx, projectKey{}, projectID)
}

func projectOf(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(projectKey{}).(int64)
	return id, ok
}

// ThrottledError says a project already runs as many analyses as it may
// and the next one waited for a slot longer than the engine queues:
// the client should try again after RetryAfter (HTTP 429).
type ThrottledError struct {
	ProjectID  int64
	Running    int
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("olap: project %d already runs %d analyses; try again in %s", e.ProjectID, e.Running, e.RetryAfter)
}

// ErrThrottled matches every *ThrottledError with errors.Is.
var ErrThrottled = errors.New("olap: too many analyses of the project at once")

// Is makes errors.Is(err, ErrThrottled) true.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// throttledRetry is the Retry-After of a refused analysis: the project's
// analyses have kept their slots for the whole queueing time already, so
// a retry soon after is as likely to find one free as a later one.
const throttledRetry = 2 * time.Second

// fairShare limits the analyses each project runs at once.
type fairShare struct {
	perProject int
	// wait is how long an analysis queues for its project's slot.
	wait time.Duration

	mu   sync.Mutex
	sems map[int64]chan struct{}
}

func newFairShare(perProject int, wait time.Duration) *fairShare {
	return &fairShare{perProject: max(perProject, 1), wait: wait, sems: map[int64]chan struct{}{}}
}

// acquire takes one of the project's slots, waiting at most the queueing
// time (or until ctx ends); release gives it back.
func (f *fairShare) acquire(ctx context.Context, project int64) (release func(), err error) {
	f.mu.Lock()
	sem := f.sems[project]
	if sem == nil {
		sem = make(chan struct{}, f.perProject)
		f.sems[project] = sem
	}
	f.mu.Unlock()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	default:
	}
	t := time.NewTimer(f.wait)
	defer t.Stop()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-t.C:
		return nil, &ThrottledError{ProjectID: project, Running: f.perProject, RetryAfter: throttledRetry}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
