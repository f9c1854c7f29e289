package metadata

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// posthogShortID is how PostHog's MCP server and CLI tell a short id from
// a numeric id.
var posthogShortID = regexp.MustCompile(`^[A-Za-z0-9]{8}$`)

func TestShortIDsAreEightLettersAndDigits(t *testing.T) {
	t.Run("random ids have PostHog's shape and use the whole alphabet", func(t *testing.T) {
		seen := map[rune]bool{}
		for range 5000 {
			id := randomShortID()
			if !posthogShortID.MatchString(id) {
				t.Fatalf("short id %q is not 8 letters and digits", id)
			}
			if strings.Trim(id, "0123456789") == "" {
				t.Fatalf("short id %q is all digits", id)
			}
			for _, r := range id {
				seen[r] = true
			}
		}
		// 40000 draws over 62 symbols: each is missed with odds of about e^-645.
		if len(seen) != len(shortIDAlphabet) {
			t.Fatalf("%d of %d symbols drawn", len(seen), len(shortIDAlphabet))
		}
	})
	for _, tc := range []struct {
		name   string
		random []byte
		want   string
	}{
		{"each byte picks a symbol modulo 62", []byte{0, 1, 25, 26, 51, 52, 61, 62}, "ABZaz09A"},
		{"bytes past the last whole multiple of 62 are skipped, not folded onto the first symbols",
			[]byte{248, 255, 0, 250, 1, 2, 3, 4, 5, 6, 7}, "ABCDEFGH"},
		{"an all-digit draw is drawn again: digits name insights by numeric id",
			[]byte{52, 53, 54, 55, 56, 57, 58, 59, 52, 53, 54, 55, 56, 57, 58, 0}, "0123456A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := shortIDFrom(bytes.NewReader(tc.random))
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("a source that runs dry is an error, not a short id", func(t *testing.T) {
		if id, err := shortIDFrom(bytes.NewReader([]byte{1, 2, 3})); err == nil {
			t.Fatalf("got %q", id)
		}
	})
}
