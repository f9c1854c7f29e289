package metrics

import (
	"database/sql"

	"github.com/prometheus/client_golang/prometheus"
)

// postgresCollector reads the PostgreSQL pool's statistics at each
// scrape (database/sql keeps them anyway; nothing is counted per query).
type postgresCollector struct{ db *sql.DB }

var (
	pgConns = prometheus.NewDesc("insightd_postgres_connections",
		"PostgreSQL connections of the pool by state: in_use, idle.", []string{"state"}, nil)
	pgMax = prometheus.NewDesc("insightd_postgres_connections_max",
		"The most connections the PostgreSQL pool may open.", nil, nil)
	pgWaits = prometheus.NewDesc("insightd_postgres_wait_total",
		"Times a query waited for a free PostgreSQL connection.", nil, nil)
	pgWaitSeconds = prometheus.NewDesc("insightd_postgres_wait_seconds_total",
		"Time queries waited for a free PostgreSQL connection.", nil, nil)
)

func (c postgresCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pgConns
	ch <- pgMax
	ch <- pgWaits
	ch <- pgWaitSeconds
}

func (c postgresCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.db.Stats()
	ch <- prometheus.MustNewConstMetric(pgConns, prometheus.GaugeValue, float64(s.InUse), "in_use")
	ch <- prometheus.MustNewConstMetric(pgConns, prometheus.GaugeValue, float64(s.Idle), "idle")
	ch <- prometheus.MustNewConstMetric(pgMax, prometheus.GaugeValue, float64(s.MaxOpenConnections))
	ch <- prometheus.MustNewConstMetric(pgWaits, prometheus.CounterValue, float64(s.WaitCount))
	ch <- prometheus.MustNewConstMetric(pgWaitSeconds, prometheus.CounterValue, s.WaitDuration.Seconds())
}
