package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// health is liveness: the process serves HTTP.
func (s *Server) health(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyWithin is how long readiness may take to answer.
const readyWithin = 2 * time.Second

// ready is readiness: both stores answer within two seconds. The checks
// run side by side and the answer never waits past the limit: a store
// whose check has not returned by then is reported as not answering
// (its check ends on its own deadline, in the background).
func (s *Server) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), readyWithin)
	defer cancel() // checks still running are not waited for
	type check struct {
		name string
		err  error
	}
	results := make(chan check, 2)
	go func() { results <- check{"postgres", s.store.Ping(ctx)} }()
	go func() { results <- check{"clickhouse", s.engine.Ping(ctx)} }()
	timer := time.NewTimer(readyWithin - 50*time.Millisecond)
	defer timer.Stop()
	checks := gin.H{"postgres": "not answering", "clickhouse": "not answering"}
	ok := true
wait:
	for range 2 {
		select {
		case r := <-results:
			if r.err != nil {
				checks[r.name] = r.err.Error()
				ok = false
			} else {
				checks[r.name] = "ok"
			}
		case <-timer.C:
			ok = false
			break wait
		case <-c.Request.Context().Done():
			ok = false
			break wait
		}
	}
	if !ok {
		c.Header("Retry-After", "1")
		c.JSON(http.StatusServiceUnavailable, gin.H{
			"type": "server_error", "code": "not_ready",
			"detail": "A backing service is unreachable.", "attr": nil, "checks": checks,
		})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ok", "checks": checks, "clickhouse_backend": s.engine.Backend()})
}
