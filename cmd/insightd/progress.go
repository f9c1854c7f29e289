package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// progress shows a long job's advance (load, demo-data): on a terminal a
// bar redrawn in place with the events written, their rate and the time
// left; otherwise (a log file, a pipe) a log line every logEvery, so logs
// stay readable. Completion is measured in the job's own unit (events for
// load, simulated visitors for demo-data, whose event count is not known
// ahead), the rate in events.
type progress struct {
	out   io.Writer // the terminal; nil writes log lines instead
	log   *slog.Logger
	now   func() time.Time
	total int64 // units of work in all
	unit  string

	began, shown time.Time
	width        int // of the last line drawn, to blank what it leaves
}

const (
	// logEvery is how often a log line reports progress off a terminal.
	logEvery = 5 * time.Second
	// drawEvery bounds how often the bar is redrawn.
	drawEvery = 100 * time.Millisecond
	barWidth  = 30
)

// newProgress reports on stderr as a bar when it is a terminal, else as
// log lines on log.
func newProgress(stderr io.Writer, log *slog.Logger, total int64, unit string) *progress {
	var out io.Writer
	if isTerminal(stderr) {
		out = stderr
	}
	now := time.Now
	return &progress{out: out, log: log, now: now, total: total, unit: unit, began: now()}
}

// isTerminal says whether w is a character device (a terminal), not a
// file or a pipe.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update reports done units of the total, with events written so far.
func (p *progress) update(done, events int64) {
	now := p.now()
	every := logEvery
	if p.out != nil {
		every = drawEvery
	}
	if now.Sub(p.shown) < every && done < p.total {
		return
	}
	p.shown = now
	elapsed := now.Sub(p.began)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(events) / elapsed.Seconds()
	}
	left := time.Duration(-1)
	if done > 0 {
		left = time.Duration(float64(elapsed) * float64(p.total-done) / float64(done)).Round(time.Second)
	}
	pct := 100 * float64(done) / float64(max(p.total, 1))
	if p.out == nil {
		attrs := []any{"events", events, "percent", float64(int(pct*10)) / 10, "events_per_second", int64(rate),
			"elapsed", elapsed.Round(time.Second).String()}
		if p.unit != "events" {
			attrs = append(attrs, p.unit, done, "of", p.total)
		}
		if left >= 0 {
			attrs = append(attrs, "left", left.String())
		}
		p.log.Info("progress", attrs...)
		return
	}
	filled := int(float64(barWidth) * float64(done) / float64(max(p.total, 1)))
	filled = min(max(filled, 0), barWidth)
	eta := "?"
	if left >= 0 {
		eta = left.String()
	}
	line := fmt.Sprintf("[%s%s] %5.1f%%  %s events  %s events/s  %s left",
		strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled), pct, count(events), count(int64(rate)), eta)
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprintf(p.out, "\r%s%s", line, strings.Repeat(" ", pad))
}

// finish ends the bar's line, so what follows starts on its own.
func (p *progress) finish() {
	if p.out != nil && p.width > 0 {
		fmt.Fprintln(p.out)
		p.width = 0
	}
}

// count writes n with thousands separators: 12,345,678.
func count(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
