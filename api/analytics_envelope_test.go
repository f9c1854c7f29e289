package api

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

// writeEnvelope writes the result's bytes as they are instead of through
// c.JSON; the answer must stay byte for byte what c.JSON wrote.
func TestWriteEnvelopeAnswersWhatCJSONWrote(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	at := time.Date(2026, 3, 1, 12, 30, 0, 123456000, time.UTC)
	marshal := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name string
		env  analysisEnvelope
	}{
		{"a computed result", analysisEnvelope{Result: marshal([]map[string]any{{"label": "a", "data": []float64{1, 2.5, 1e21}}}),
			LastRefresh: &at, Timezone: "Europe/Paris"}},
		{"a cached result with text to escape", analysisEnvelope{Result: marshal([]any{"<b>&</b>", "\u2028", "é"}), IsCached: true,
			LastRefresh: &at, Timezone: "UTC"}},
		{"nothing cached (force_cache)", analysisEnvelope{Result: json.RawMessage("null"), Timezone: "UTC"}},
		{"a result with debug", analysisEnvelope{Result: json.RawMessage(`{"a":[1,2]}`), LastRefresh: &at, Timezone: "UTC",
			Debug: &analysisDebug{SQL: "SELECT <1> & 2", Params: map[string]any{"p": "x"}}}},
		{"a result that is not compact", analysisEnvelope{Result: json.RawMessage("[ 1,\n 2 ]"), Timezone: "UTC"}},
		{"a result that is not JSON", analysisEnvelope{Result: json.RawMessage("[1,"), Timezone: "UTC"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(want)
			c.JSON(200, tc.env)
			got := httptest.NewRecorder()
			c, _ = gin.CreateTestContext(got)
			writeEnvelope(c, tc.env)
			if got.Code != want.Code || got.Body.String() != want.Body.String() ||
				got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Fatalf("got %d %q %q\nwant %d %q %q", got.Code, got.Header().Get("Content-Type"), got.Body,
					want.Code, want.Header().Get("Content-Type"), want.Body)
			}
		})
	}
}
