package ingest

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/insightd/insightd/api/httpx"
)

// lzCases are texts and their lz64 as lz-string 1.5.0's compressToBase64
// (the JavaScript library posthog-js used) wrote them.
func lzCases(t testing.TB) map[string]struct{ Plain, LZ64 string } {
	t.Helper()
	b, err := os.ReadFile("testdata/lz64/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]struct{ Plain, LZ64 string }
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestLZ64DecodesWhatLZStringWrote(t *testing.T) {
	for name, c := range lzCases(t) {
		t.Run(name, func(t *testing.T) {
			got, err := lz64Decompress(c.LZ64, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.Plain {
				t.Fatalf("got %q, want %q", truncate(string(got), 80), truncate(c.Plain, 80))
			}
		})
	}
}

func TestLZ64RefusesWhatItCannotRead(t *testing.T) {
	c := lzCases(t)
	batch := c["batch"].LZ64
	cases := []struct {
		name, in string
		limit    int64
		want     error
	}{
		{"nothing", "", 1 << 20, errLZ64},
		{"a stream cut short", batch[:len(batch)/2], 1 << 20, errLZ64},
		{"a character outside the alphabet", batch[:10] + "*" + batch[11:], 1 << 20, errLZ64},
		{"plain text", "hello world", 1 << 20, errLZ64},
		{"more than the limit once decoded", c["repetitive"].LZ64, 1000, httpx.ErrBodyTooLarge},
		{"exactly the limit is fine", c["batch"].LZ64, int64(len(c["batch"].Plain)), nil},
		{"a byte over the limit", c["batch"].LZ64, int64(len(c["batch"].Plain)) - 1, httpx.ErrBodyTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lz64Decompress(tc.in, tc.limit)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// The decoder meets whatever a client sends: it must end, stay within its
// limit and never panic.
func FuzzLZ64Decompress(f *testing.F) {
	for _, c := range lzCases(f) {
		f.Add(c.LZ64)
	}
	f.Fuzz(func(t *testing.T, in string) {
		const limit = 1 << 16
		out, err := lz64Decompress(in, limit)
		if err == nil && len(out) > limit {
			t.Fatalf("%d bytes out, over the limit", len(out))
		}
	})
}
