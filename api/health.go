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

// ready is readiness: both stores answer within two seconds.
func (s *Server) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	checks := gin.H{}
	ok := true
	if err := s.store.Ping(ctx); err != nil {
		checks["postgres"] = err.Error()
		ok = false
	} else {
		checks["postgres"] = "ok"
	}
	if err := s.engine.Ping(ctx); err != nil {
		checks["clickhouse"] = err.Error()
		ok = false
	} else {
		checks["clickhouse"] = "ok"
	}
	if !ok {
		c.JSON(http.StatusServiceUnavailable, gin.H{
			"type": "server_error", "code": "not_ready",
			"detail": "A backing service is unreachable.", "attr": nil, "checks": checks,
		})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ok", "checks": checks, "clickhouse_backend": s.engine.Backend()})
}
