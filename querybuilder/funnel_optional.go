package querybuilder

import "fmt"

// Optional funnel steps (optionalInFunnel), as PostHog's ordered funnels
// have them: a step the conversion may skip. Its semantics here:
//
//   - The required steps make the funnel as if the optional ones were
//     not there: an attempt reaches required step q when it reached the
//     required step r before it and does q's event after r's, inside the
//     window.
//   - An optional step o between r and q is in the attempt when the
//     attempt has an event of o after r's event and before q's (inside
//     the window when q is not reached). Consecutive optional steps are
//     each checked on their own.
//   - The counted attempt is the one reaching the furthest step, an
//     optional step after the last required one it reached counting as
//     reaching that step; the latest started among ties, as without
//     optional steps.
//   - A step's count is the actors whose counted attempt has it; a
//     step's conversion time is from the required step before it.
//
// As in PostHog, the first step cannot be optional, an optional step
// cannot be followed by a required step of the same definition (that
// step would take every one of its events), and only the steps
// visualisation of ordered funnels has them. insightd also refuses them
// in strict funnels and in exclusions' bounds (see validateOptional).

// hasOptional reports whether any step is optional.
func (q *FunnelQuery) hasOptional() bool {
	for _, s := range q.Steps {
		if s.Optional {
			return true
		}
	}
	return false
}

// optional reports whether step j (1-based) is optional.
func (q *FunnelQuery) optional(j int) bool { return q.Steps[j-1].Optional }

// prevRequired is the required step (1-based) before step j, 0 for none.
func (q *FunnelQuery) prevRequired(j int) int {
	for i := j - 1; i >= 1; i-- {
		if !q.optional(i) {
			return i
		}
	}
	return 0
}

// nextRequired is the required step (1-based) after step j, 0 for none.
func (q *FunnelQuery) nextRequired(j int) int {
	for i := j + 1; i <= len(q.Steps); i++ {
		if !q.optional(i) {
			return i
		}
	}
	return 0
}

// validateOptional refuses optional steps where their meaning is not
// defined (by PostHog) or not computed (by insightd).
func (q *FunnelQuery) validateOptional(pr *problems) {
	if !q.hasOptional() {
		return
	}
	const why = "optional funnel steps (optionalInFunnel)"
	switch {
	case q.Steps[0].Optional:
		pr.add("events", "%s: the first step of a funnel cannot be optional", why)
	case q.Order == orderUnordered:
		pr.add("funnel_order_type", "%s need an ordered funnel: an unordered one has no order to skip a step in", why)
	case q.Order == orderStrict:
		pr.add("funnel_order_type", "%s are not supported in strict funnels by insightd; use funnel_order_type ordered", why)
	case q.Viz != VizSteps:
		pr.add("funnel_viz_type", "%s are supported with funnel_viz_type steps only, got %s", why, q.Viz)
	}
	for j := 1; j < len(q.Steps); j++ {
		if q.optional(j) && !q.optional(j+1) && (q.Steps[j].AllEvents || sameDefinition(q.Steps[j-1], q.Steps[j])) {
			pr.add("events", "%s: step %d is optional and step %d, required, selects its events too: it would never convert", why, j-1, j)
		}
	}
	for i, x := range q.Exclusions {
		for _, s := range []int{x.FromStep, x.ToStep} {
			if s >= 0 && s < len(q.Steps) && q.Steps[s].Optional {
				pr.add("exclusions", "exclusions[%d]: step %d is optional; an exclusion's funnel_from_step and funnel_to_step must be required steps", i, s)
			}
		}
	}
}

// reachedCol is the condition, over an attempts row, that the counted
// attempt has step j (1-based): level for a required step, its time for
// an optional one (level counts the furthest step reached).
func (q *FunnelQuery) reachedCol(j int) string {
	if q.optional(j) {
		return fmt.Sprintf("t_%d != 0", j)
	}
	return fmt.Sprintf("level >= %d", j)
}
