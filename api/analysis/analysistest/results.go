package analysistest

// The answers of the kinds as the API shapes them.

type APIPathEdge struct {
	Source, Target string
	Value          int64
	Avg            float64 `json:"average_conversion_time"`
}

func Edge(source, target string, value int64, avgMinutes float64) APIPathEdge {
	return APIPathEdge{Source: source, Target: target, Value: value, Avg: avgMinutes * 60000}
}

type APIStickiness struct {
	Label        string    `json:"label"`
	Count        float64   `json:"count"`
	Data         []float64 `json:"data"`
	Days         []int     `json:"days"`
	Labels       []string  `json:"labels"`
	CompareLabel string    `json:"compare_label"`
}

type APITrendSeries struct {
	Label  string    `json:"label"`
	Status string    `json:"status"`
	Data   []float64 `json:"data"`
	Count  float64   `json:"count"`
}
