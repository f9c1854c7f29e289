package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// The PostgreSQL outage: at -outage-at the soak runs -pg-stop, and
// -outage-for later -pg-start. Meanwhile writes may answer 503 ("503 in
// outage"); every other request must still be answered (reads from the
// server's outage memory, captures of the known token). No kill falls
// within a kill interval of it: a server cannot start without PostgreSQL.

// outageStart is when the outage starts, after the soak's start.
func (s *server) outageStart() time.Duration {
	if s.c.outageAt > 0 {
		return s.c.outageAt
	}
	return s.c.duration * 45 / 100
}

// nearOutage reports whether a kill now would fall near the outage.
func (s *server) nearOutage(start time.Time) bool {
	if s.c.pgStop == "" {
		return false
	}
	from := start.Add(s.outageStart() - s.c.killEvery/2)
	to := start.Add(s.outageStart() + s.c.outageFor + s.c.killEvery/2)
	now := time.Now()
	return now.After(from) && now.Before(to)
}

// scheduleOutage runs the outage in the background; the channel gives
// its error (nil without one) once it is over or ctx ended first.
func (s *server) scheduleOutage(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	if s.c.pgStop == "" {
		done <- nil
		return done
	}
	go func() {
		select {
		case <-ctx.Done():
			done <- nil
			return
		case <-time.After(s.outageStart()):
		}
		s.outage.Store(true)
		at := time.Now()
		if out, err := exec.Command("bash", "-c", s.c.pgStop).CombinedOutput(); err != nil {
			done <- fmt.Errorf("stop PostgreSQL: %v: %s", err, out)
			return
		}
		stopped := time.Since(at)
		time.Sleep(s.c.outageFor)
		restart := time.Now()
		if out, err := exec.Command("bash", "-c", s.c.pgStart).CombinedOutput(); err != nil {
			done <- fmt.Errorf("start PostgreSQL: %v: %s", err, out)
			return
		}
		started := time.Since(restart)
		time.Sleep(time.Second) // requests answered just after are still the outage's
		s.outage.Store(false)
		s.outageLog = fmt.Sprintf("PostgreSQL stopped at %s (stop took %s) for %s, started again in %s.\n\n",
			s.outageStart().Round(time.Second), stopped.Round(10*time.Millisecond), s.c.outageFor, started.Round(10*time.Millisecond))
		done <- nil
	}()
	return done
}
