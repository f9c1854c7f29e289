package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func testProgress(total int64, unit string) (*progress, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return &progress{now: c.now, total: total, unit: unit, began: c.t}, c
}

func TestProgressBarOnATerminal(t *testing.T) {
	p, clock := testProgress(1_000_000, "events")
	var out bytes.Buffer
	p.out = &out

	clock.advance(10 * time.Second)
	p.update(250_000, 250_000)
	want := "\r[=======                       ]  25.0%  250,000 events  25,000 events/s  30s left"
	if out.String() != want {
		t.Fatalf("first draw\n got %q\nwant %q", out.String(), want)
	}

	t.Run("a draw sooner than drawEvery is skipped", func(t *testing.T) {
		out.Reset()
		clock.advance(50 * time.Millisecond)
		p.update(260_000, 260_000)
		if out.Len() != 0 {
			t.Fatalf("drew %q", out.String())
		}
	})
	t.Run("a later draw replaces the line, blanking what a longer one left", func(t *testing.T) {
		out.Reset()
		clock.advance(9950 * time.Millisecond) // 20s in all
		p.update(800_000, 800_000)
		want := "\r[========================      ]  80.0%  800,000 events  40,000 events/s  5s left"
		if out.String() != want+strings.Repeat(" ", 1) {
			t.Fatalf("\n got %q\nwant %q", out.String(), want+" ")
		}
	})
	t.Run("the last update always draws, and finish ends the line", func(t *testing.T) {
		out.Reset()
		clock.advance(time.Millisecond)
		p.update(1_000_000, 1_000_000)
		p.finish()
		s := out.String()
		if !strings.HasPrefix(s, "\r[==============================] 100.0%  1,000,000 events") || !strings.HasSuffix(s, "0s left\n") {
			t.Fatalf("got %q", s)
		}
	})
}

func TestProgressLogLinesOffATerminal(t *testing.T) {
	p, clock := testProgress(200, "visitors")
	var logs bytes.Buffer
	p.log = slog.New(slog.NewJSONHandler(&logs, nil))
	// An update every second for 12 seconds: lines at 1s (the first), 6s
	// and 11s, then the last one.
	for i := int64(1); i <= 12; i++ {
		clock.advance(time.Second)
		p.update(i*10, i*100)
	}
	p.update(200, 2000)
	p.finish() // writes nothing off a terminal

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 4 {
		t.Fatalf("want 4 lines (1s, 6s, 11s, done), got %d:\n%s", len(lines), logs.String())
	}
	// At 6s: 60 of 200 visitors, 600 events, 100 events/s, 14s left.
	l := lines[1]
	if l["msg"] != "progress" || l["events"] != 600.0 || l["visitors"] != 60.0 || l["of"] != 200.0 || l["percent"] != 30.0 ||
		l["events_per_second"] != 100.0 || l["elapsed"] != "6s" || l["left"] != "14s" {
		t.Fatalf("the 6s line: %v", l)
	}
	if last := lines[3]; last["percent"] != 100.0 || last["events"] != 2000.0 || last["left"] != "0s" {
		t.Fatalf("the last line: %v", last)
	}
}

func TestCountHasThousandsSeparators(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 123456789: "123,456,789"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
