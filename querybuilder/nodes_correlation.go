package querybuilder

import (
	"encoding/json"
	"strings"
)

// A FunnelCorrelationActorsQuery lists the actors behind one count of a
// correlation item: its source a FunnelCorrelationQuery, whose source is
// a FunnelsActorsQuery around the FunnelsQuery. It translates to the
// legacy correlation request and the selection its people URLs carry
// (funnel_correlation_person_converted, funnel_correlation_person_entity
// or funnel_correlation_property_values), so that both list the same
// actors (CorrelationQuery.Actors).

// correlationFields are FunnelCorrelationQuery's fields and the legacy
// parameters they are.
var correlationFields = [][2]string{
	{"funnelCorrelationType", "funnel_correlation_type"},
	{"funnelCorrelationNames", "funnel_correlation_names"},
	{"funnelCorrelationExcludeNames", "funnel_correlation_exclude_names"},
	{"funnelCorrelationEventNames", "funnel_correlation_event_names"},
	{"funnelCorrelationEventExcludePropertyNames", "funnel_correlation_event_exclude_property_names"},
	{"funnelCorrelationExcludeEventNames", "funnel_correlation_exclude_event_names"},
}

// correlationActorsSource reads a FunnelCorrelationActorsQuery (r) into
// the correlation request and, in sel, the selection of one item's
// successful or failed actors.
func (r *nodeReader) correlationActorsSource(sel Params) (*InsightNode, *Kind) {
	node := r.correlationQuery()
	if v := r.raw("funnelCorrelationPersonConverted"); v != nil {
		var b bool
		if json.Unmarshal(v, &b) != nil {
			r.pr.add(r.at("funnelCorrelationPersonConverted"), "%s must be true or false", r.at("funnelCorrelationPersonConverted"))
		}
		sel["funnel_correlation_person_converted"] = mustMarshal(b)
	}
	if v := r.raw("funnelCorrelationPersonEntity"); v != nil {
		path := r.at("funnelCorrelationPersonEntity")
		ent, kind := r.entity(v, path)
		if kind == "ActionsNode" {
			r.pr.add(path+".kind", "%s.kind: correlation items are events; name the item's event with an EventsNode", path)
		}
		if ent != nil {
			sel["funnel_correlation_person_entity"] = mustMarshal(ent)
		}
	}
	if v := r.raw("funnelCorrelationPropertyValues"); v != nil {
		sel["funnel_correlation_property_values"] = v
	}
	r.done()
	if node == nil {
		return nil, nil
	}
	for param, field := range map[string]string{"funnel_correlation_person_converted": "funnelCorrelationPersonConverted",
		"funnel_correlation_person_entity": "funnelCorrelationPersonEntity", "funnel_correlation_property_values": "funnelCorrelationPropertyValues"} {
		node.Origins[param] = r.at(field)
	}
	return node, &correlationKind
}

// correlationQuery reads the FunnelCorrelationQuery at r's source: the
// funnel's request with the correlation's parameters beside it.
func (r *nodeReader) correlationQuery() *InsightNode {
	c := r.object("source")
	if c == nil || c.kind() != "FunnelCorrelationQuery" {
		if r.pr.ok() {
			r.pr.add(r.at("source"), "%s must be a FunnelCorrelationQuery", r.at("source"))
		}
		if c != nil {
			c.ignoreAll()
		}
		return nil
	}
	c.ignore("response", "version", "modifiers", "tags")
	fa := c.object("source")
	if fa == nil || fa.kind() != "FunnelsActorsQuery" {
		if r.pr.ok() {
			r.pr.add(c.at("source"), "%s must be a FunnelsActorsQuery around the funnel's FunnelsQuery", c.at("source"))
		}
		c.ignoreAll()
		if fa != nil {
			fa.ignoreAll()
		}
		return nil
	}
	fa.ignore("modifiers", "response", "version", "includeRecordings")
	const every = "a correlation compares every actor who entered the funnel; leave it out"
	for _, f := range []string{"funnelStep", "funnelStepBreakdown", "funnelCustomSteps", "funnelTrendsDropOff",
		"funnelTrendsEntrancePeriodStart", "limit", "offset"} {
		fa.refuse(f, every)
	}
	raw := fa.raw("source")
	fa.done()
	if raw == nil {
		r.pr.add(fa.at("source"), "%s is required: the FunnelsQuery whose actors the correlation compares", fa.at("source"))
		c.ignoreAll()
		return nil
	}
	node, err := TranslateNode(raw, fa.at("source"))
	if err != nil {
		r.pr.errs = append(r.pr.errs, err)
		c.ignoreAll()
		return nil
	}
	if node.Kind != "FunnelsQuery" {
		r.pr.add(fa.at("source.kind"), "a FunnelsActorsQuery's source is a FunnelsQuery, got %q", node.Kind)
	}
	if node.Origins == nil {
		node.Origins = map[string]string{}
	}
	if c.raw("funnelCorrelationType") == nil {
		r.pr.add(c.at("funnelCorrelationType"), "%s is required: events, properties or event_with_properties", c.at("funnelCorrelationType"))
	}
	for _, f := range correlationFields {
		c.copy(f[0], f[1], node.Params)
		node.Origins[f[1]] = c.at(f[0])
	}
	c.done()
	return node
}

// ignoreAll marks every field read: a node already refused as a whole
// needs no more problems about its parts.
func (r *nodeReader) ignoreAll() {
	for k := range r.m {
		r.used[k] = true
	}
}

// kindLabel is a kind as a message names it: its node, or its name.
func kindLabel(k *Kind) string {
	if k.Node != "" {
		return k.Node
	}
	return strings.ToLower(k.Name)
}
