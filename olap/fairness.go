package olap

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Analyses are the statements a project's users ask for (trends, funnels,
// persons, events lists...): long, and as many as clients send. They run
// under a project (WithProject) and share the engine fairly: at most a
// share of its statement slots per project, so one project's abandoned
// funnels cannot hold every slot, and never the slots kept for ingestion
// and readiness (statements without a project: inserts, pings, small
// lookups). An analysis queues at most the queueing time in all: for its
// project's slot, then for an engine connection.

type projectKey struct{}

// WithProject marks the statements of ctx as an analysis of the project.
func WithProject(ctx context.Context, projectID int64) context.Context {
	return context.WithValue(ctx, projectKey{}, projectID)
}

func projectOf(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(projectKey{}).(int64)
	return id, ok
}

// ThrottledError says an analysis queued longer than the engine queues:
// its project already ran as many analyses as it may, or every engine
// connection was busy with other projects' analyses. The client should
// try again after RetryAfter (HTTP 429).
type ThrottledError struct {
	ProjectID int64
	// Running is how many analyses the project ran when it was refused.
	Running int
	// EngineBusy: the project had a slot, but no engine connection came
	// free in time.
	EngineBusy bool
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	if e.EngineBusy {
		return fmt.Sprintf("olap: every engine connection is busy; project %d waited for one; try again in %s", e.ProjectID, e.RetryAfter)
	}
	return fmt.Sprintf("olap: project %d already runs %d analyses; try again in %s", e.ProjectID, e.Running, e.RetryAfter)
}

// Detail says why, for the client.
func (e *ThrottledError) Detail() string {
	if e.EngineBusy {
		return "The server runs as many analyses as it can at once; try again shortly."
	}
	return fmt.Sprintf("The project already runs %d analyses at once; try again shortly.", e.Running)
}

// ErrThrottled matches every *ThrottledError with errors.Is.
var ErrThrottled = errors.New("olap: too many analyses of the project at once")

// Is makes errors.Is(err, ErrThrottled) true.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// throttledRetry is the Retry-After of a refused analysis: the project's
// analyses have kept their slots for the whole queueing time already, so
// a retry soon after is as likely to find one free as a later one.
const throttledRetry = 2 * time.Second

// fairShare limits the analyses each project runs at once, and keeps the
// statements under way by query id so that Cancel finds the queued ones
// too (calls.go).
type fairShare struct {
	perProject int
	// wait is how long an analysis queues in all.
	wait time.Duration

	mu   sync.Mutex
	sems map[int64]chan struct{}

	calls *calls
}

func newFairShare(perProject int, wait time.Duration) *fairShare {
	return &fairShare{perProject: max(perProject, 1), wait: wait, sems: map[int64]chan struct{}{}, calls: newCalls()}
}

// acquire takes one of the project's slots, waiting at most the queueing
// time (or until ctx ends); release gives it back. deadline is when the
// queueing time ends: the wait for a connection that follows ends then
// too.
func (f *fairShare) acquire(ctx context.Context, project int64) (release func(), deadline time.Time, err error) {
	deadline = time.Now().Add(f.wait)
	f.mu.Lock()
	sem := f.sems[project]
	if sem == nil {
		sem = make(chan struct{}, f.perProject)
		f.sems[project] = sem
	}
	f.mu.Unlock()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, deadline, nil
	default:
	}
	t := time.NewTimer(f.wait)
	defer t.Stop()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, deadline, nil
	case <-t.C:
		return nil, deadline, &ThrottledError{ProjectID: project, Running: f.perProject, RetryAfter: throttledRetry}
	case <-ctx.Done():
		return nil, deadline, context.Cause(ctx)
	}
}

// running is how many analyses the project runs.
func (f *fairShare) running(project int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sems[project])
}

// waitFor takes a value from pool, waiting until the queueing deadline
// (then ThrottledError, the engine busy) or until ctx ends.
func waitFor[T any](ctx context.Context, f *fairShare, project int64, deadline time.Time, pool chan T) (T, error) {
	select {
	case v := <-pool:
		return v, nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	var zero T
	select {
	case v := <-pool:
		return v, nil
	case <-t.C:
		return zero, &ThrottledError{ProjectID: project, Running: f.running(project), EngineBusy: true, RetryAfter: throttledRetry}
	case <-ctx.Done():
		return zero, context.Cause(ctx)
	}
}
