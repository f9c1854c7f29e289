package reference

// Optional funnel steps (optionalInFunnel) in the reference attempt.

// prevRequired is the required step before step j (-1 for none).
func (f Funnel) prevRequired(j int) int {
	for i := j - 1; i >= 0; i-- {
		if !f.Steps[i].Optional {
			return i
		}
	}
	return -1
}

// hasOptional reports whether a step is optional.
func (f Funnel) hasOptional() bool {
	for _, s := range f.Steps {
		if s.Optional {
			return true
		}
	}
	return false
}

// optionalAttempt is an ordered attempt with optional steps, by the
// text of querybuilder/funnel_optional.go: the required steps as a
// funnel of their own, then each optional step's first event after the
// required step before it and before the required step after it (inside
// the window when that one is not reached). The path ends at its
// furthest step.
func (f Funnel) optionalAttempt(evs []Event, start int) []int {
	if !f.Steps[0].Matches(evs[start]) {
		return nil
	}
	n := len(f.Steps)
	path := make([]int, n)
	for j := range path {
		path[j] = -1
	}
	path[0] = start
	prev := start
	for j := 1; j < n; j++ {
		if f.Steps[j].Optional {
			continue
		}
		next := -1
		for k := prev + 1; k < len(evs) && f.InWindow(evs, start, k); k++ {
			if f.Steps[j].Matches(evs[k]) {
				next = k
				break
			}
		}
		if next < 0 {
			break
		}
		path[j], prev = next, next
	}
	for j := 1; j < n; j++ {
		r := f.prevRequired(j)
		if !f.Steps[j].Optional || path[r] < 0 {
			continue
		}
		end := len(evs)
		for q := j + 1; q < n; q++ {
			if !f.Steps[q].Optional {
				if path[q] >= 0 {
					end = path[q]
				}
				break
			}
		}
		for k := path[r] + 1; k < end && f.InWindow(evs, start, k); k++ {
			if f.Steps[j].Matches(evs[k]) {
				path[j] = k
				break
			}
		}
	}
	last := 0
	for j := range path {
		if path[j] >= 0 {
			last = j
		}
	}
	return path[:last+1]
}
