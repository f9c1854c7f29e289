package analysistest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/insightd/insightd/querybuilder/reference"
)

type APICorrelation struct {
	Events []struct {
		Event struct {
			Event string `json:"event"`
		} `json:"event"`
		SuccessCount     int64   `json:"success_count"`
		FailureCount     int64   `json:"failure_count"`
		OddsRatio        float64 `json:"odds_ratio"`
		CorrelationType  string  `json:"correlation_type"`
		SuccessPeopleURL string  `json:"success_people_url"`
		FailurePeopleURL string  `json:"failure_people_url"`
	} `json:"events"`
	Skewed bool `json:"skewed"`
}

// CheckCorrelation compares the API's answer with the reference's and
// returns the answer.
func CheckCorrelation(t testing.TB, p Project, events []reference.Event, c reference.Correlation) APICorrelation {
	t.Helper()
	var got APICorrelation
	Result(t, p, "funnel/correlation", c.Params(), &got)
	want, skewed := c.Answer(events)
	same := len(got.Events) == len(want) && got.Skewed == skewed
	for i := 0; same && i < len(want); i++ {
		g, w := got.Events[i], want[i]
		same = g.Event.Event == w.Name && g.SuccessCount == w.S && g.FailureCount == w.F && g.CorrelationType == w.Type &&
			math.Abs(g.OddsRatio-w.Ratio) <= 1e-9*math.Max(1, w.Ratio)
	}
	if !same {
		var gs, ws []string
		for _, e := range got.Events {
			gs = append(gs, fmt.Sprintf("%s s=%d f=%d %.4f %s", e.Event.Event, e.SuccessCount, e.FailureCount, e.OddsRatio, e.CorrelationType))
		}
		for _, e := range want {
			ws = append(ws, fmt.Sprintf("%s s=%d f=%d %.4f %s", e.Name, e.S, e.F, e.Ratio, e.Type))
		}
		t.Fatalf("request %v\n got skewed=%v\n  %s\nwant skewed=%v\n  %s", c.Params(), got.Skewed, strings.Join(gs, "\n  "), skewed, strings.Join(ws, "\n  "))
	}
	return got
}
