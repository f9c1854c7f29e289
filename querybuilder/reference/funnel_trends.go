package reference

import "time"

// TrendRates are the conversion rates per day of entry, one per day of
// the date range, with the days as YYYY-MM-DD: of the persons entering
// on a day (TrendPeople), those who converted.
func (f Funnel) TrendRates(all []Event) (rates []float64, days []string) {
	from, to := f.DateRange()
	for day := from; day.Before(to); day = day.AddDate(0, 0, 1) {
		converted, dropped := f.TrendPeople(all, day, day.AddDate(0, 0, 1))
		rate := 0.0
		if entered := len(converted) + len(dropped); entered > 0 {
			rate = 100 * float64(len(converted)) / float64(entered)
		}
		rates = append(rates, rate)
		days = append(days, day.Format("2006-01-02"))
	}
	return rates, days
}

// TrendPeople are the persons TrendRates counts for the entry day
// [day, next): those who converted and those who dropped.
func (f Funnel) TrendPeople(all []Event, day, next time.Time) (converted, dropped map[string]bool) {
	converted, dropped = map[string]bool{}, map[string]bool{}
	for _, p := range f.Read(all) {
		// The bucket's counted attempt: the latest of those reaching the
		// furthest step among the attempts starting in the bucket; its
		// exclusions remove the person from the bucket.
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
