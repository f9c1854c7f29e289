// Package ingest is SDK ingestion: the capture endpoints PostHog's SDKs
// send events to (/batch, /e, /i/v0/e, /capture), their start-up calls
// (/flags, /decide, remote config) and the CORS those browser-facing
// paths answer with. Requests authenticate by the project's token, not a
// personal key; events are stored through the event writer, and each
// stored request is noted on the clock the analysis cache judges open
// ranges by.
package ingest

import (
	"log/slog"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
)

// Config tunes ingestion.
type Config struct {
	// BodyLimit bounds a request's body, also after gzip (bytes).
	BodyLimit int64
	// Metrics, when set, counts accepted, deduplicated, rejected and
	// failed events.
	Metrics *metrics.Metrics
	// GeoIP, when set, locates events by their sender's address
	// (geoip.go); projects that anonymize IPs are never located.
	GeoIP *GeoIP
	// GeoIPPersons sets the located person's $geoip_* and
	// $initial_geoip_* properties too.
	GeoIPPersons bool
}

// Changes is told of every project whose events were just stored.
type Changes interface{ Note(projectID int64) }

// Service answers the SDKs' requests.
type Service struct {
	cfg     Config
	log     *slog.Logger
	store   *metadata.Store
	writer  *olap.Writer
	changes Changes
	// ingested remembers projects known to have their ingested_event set.
	ingested sync.Map
	// groupTypes caches projects' group types (groups.go).
	groupTypes groupTypeCache
}

// New builds the service; events go to writer, which its caller owns
// (and closes once the server has stopped answering).
func New(cfg Config, log *slog.Logger, store *metadata.Store, writer *olap.Writer, changes Changes) *Service {
	return &Service{cfg: cfg, log: log, store: store, writer: writer, changes: changes}
}

// Routes serves capture, flags and remote config on r.
func (s *Service) Routes(r *gin.Engine) {
	s.captureRoutes(r)
	s.flagRoutes(r)
	staticRoutes(r)
}
