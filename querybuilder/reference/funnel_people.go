package reference

import "time"

// TrendPeople are the persons trendRates counts for the entry day
// [day, next): those who converted and those who dropped.
func (f Funnel) TrendPeople(all []Event, day, next time.Time) (converted, dropped map[string]bool) {
	converted, dropped = map[string]bool{}, map[string]bool{}
	for _, p := range f.Read(all) {
		var best []int
		for start, e := range p.Events {
			if e.At.Before(day) || !e.At.Before(next) {
				continue
			}
			if path := f.Attempt(p.Events, start); path != nil && len(path) >= len(best) {
				best = path
			}
		}
		if best == nil || f.Excluded(&Person{Events: p.Events, Path: best}) || len(best) <= f.FromStep {
			continue
		}
		if len(best) > f.LastStep() {
			converted[p.ID] = true
		} else {
			dropped[p.ID] = true
		}
	}
	return converted, dropped
}
