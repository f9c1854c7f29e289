package loaded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// Spread is the median of durations in milliseconds with their range.
func Spread(ds []time.Duration) string {
	return fmt.Sprintf("%.0f (%.0f-%.0f)", Ms(Median(ds)), Ms(slices.Min(ds)), Ms(slices.Max(ds)))
}

// MedianOf is the middle of numbers.
func MedianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Ratios is the median of ratios taken round by round, with their range.
func Ratios(xs []float64) string {
	return fmt.Sprintf("%.2f (%.2f-%.2f)", MedianOf(xs), slices.Min(xs), slices.Max(xs))
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// HTTPResult posts body to the analysis route with refresh=true (no
// result cache) and returns the result, read and decoded as a client does.
func (e *Env) HTTPResult(route string, body []byte) json.RawMessage {
	req, _ := http.NewRequest("POST", e.InsightsURL+route+"/?refresh=true", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.Client.Do(req)
	Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Check(err)
	if resp.StatusCode != 200 {
		Check(fmt.Errorf("%s: %d %s", route, resp.StatusCode, b))
	}
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	Check(json.Unmarshal(b, &out))
	return out.Result
}
