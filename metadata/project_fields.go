package metadata

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/types"
	"github.com/lib/pq"

	"github.com/insightd/insightd/querybuilder"
)

// ValidationError is bad input to a store method, naming the field.
type ValidationError struct {
	Attr   string
	Detail string
}

func (e *ValidationError) Error() string { return e.Attr + ": " + e.Detail }

// ProjectInput is a checked set of writeable project fields: column name
// to the value to store.
type ProjectInput struct {
	Values map[string]any
}

type projectField = field[Project]

// ParseProjectInput checks the writeable fields present in body (any
// subset). Fields that are not writeable (read-only or unknown) are
// ignored, as PostHog does; the first bad value is a ValidationError.
func ParseProjectInput(body map[string]json.RawMessage) (ProjectInput, error) {
	values, err := parseFields(projectFields, body)
	return ProjectInput{Values: values}, err
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func boolField(name string, get func(*Project) bool) projectField {
	return projectField{name: name,
		parse: func(raw json.RawMessage) (any, string) {
			var b bool
			if isNull(raw) || json.Unmarshal(raw, &b) != nil {
				return nil, "Must be a boolean."
			}
			return b, ""
		},
		get: func(p *Project) any { return get(p) },
	}
}

func stringsField(name string, get func(*Project) []string) projectField {
	return projectField{name: name,
		parse: func(raw json.RawMessage) (any, string) {
			// Decode loosely first: a null element would become "" in a []string.
			var items []any
			if isNull(raw) || json.Unmarshal(raw, &items) != nil {
				return nil, "Must be a list of strings."
			}
			list := make([]string, len(items))
			for i, it := range items {
				s, ok := it.(string)
				if !ok {
					return nil, fmt.Sprintf("Must be a list of strings; item %d is not a string.", i)
				}
				if strings.ContainsRune(s, 0) {
					return nil, fmt.Sprintf("Item %d: %s", i, noNUL)
				}
				list[i] = s
			}
			return pq.StringArray(list), ""
		},
		get: func(p *Project) any { return []string(get(p)) },
	}
}

// jsonKind constrains an untyped field: any JSON, a list, or an object.
type jsonKind int

const (
	anyJSON jsonKind = iota
	listJSON
	objectJSON
)

func jsonField(name string, kind jsonKind, nullable bool, get func(*Project) json.RawMessage) projectField {
	return projectField{name: name,
		parse: func(raw json.RawMessage) (any, string) {
			if isNull(raw) {
				if nullable {
					return nil, ""
				}
				return nil, "This field may not be null."
			}
			doc, v, problem := jsonDocument(raw)
			if problem != "" {
				return nil, problem
			}
			switch kind {
			case listJSON:
				if _, ok := v.([]any); !ok {
					return nil, "Must be a list."
				}
			case objectJSON:
				if _, ok := v.(map[string]any); !ok {
					return nil, "Must be an object."
				}
			}
			return doc, ""
		},
		get: func(p *Project) any { return get(p) },
	}
}

// pathCleaningField is path_cleaning_filters, checked as paths read it
// (querybuilder.CheckPathCleaning): a regex that does not compile is
// refused when the project is saved, not when a paths request uses it.
func pathCleaningField() projectField {
	f := jsonField("path_cleaning_filters", listJSON, false, func(p *Project) json.RawMessage { return json.RawMessage(p.PathCleaningFilters) })
	parse := f.parse
	f.parse = func(raw json.RawMessage) (any, string) {
		v, problem := parse(raw)
		if problem != "" {
			return v, problem
		}
		if ves := querybuilder.ValidationErrors(querybuilder.CheckPathCleaning(raw)); len(ves) > 0 {
			return nil, ves[0].Detail
		}
		return v, ""
	}
	return f
}

func nullJSON(j types.NullJSONText) json.RawMessage {
	if !j.Valid {
		return nil
	}
	return json.RawMessage(j.JSONText)
}

// webhookMax bounds a Slack webhook URL, as PostHog's column does.
const webhookMax = 500

// sampleRate is a decimal from 0.00 to 1.00 with at most two places.
var sampleRate = regexp.MustCompile(`^(0(\.[0-9]{1,2})?|1(\.0{1,2})?|\.[0-9]{1,2})$`)

// projectFields are the contract's writeable fields with their rules.
var projectFields = []projectField{
	{name: "name",
		parse: func(raw json.RawMessage) (any, string) {
			var s string
			if isNull(raw) || json.Unmarshal(raw, &s) != nil {
				return nil, "Must be a string."
			}
			s = strings.TrimSpace(s)
			if n := len([]rune(s)); n < 1 || n > 200 {
				return nil, "Must be 1 to 200 characters."
			}
			if strings.ContainsRune(s, 0) {
				return nil, noNUL
			}
			return s, ""
		},
		get: func(p *Project) any { return p.Name }},
	stringsField("app_urls", func(p *Project) []string { return p.AppURLs }),
	{name: "slack_incoming_webhook", parse: nullableText(webhookMax),
		get: func(p *Project) any { return nullString(p.SlackIncomingWebhook.String, p.SlackIncomingWebhook.Valid) }},
	boolField("anonymize_ips", func(p *Project) bool { return p.AnonymizeIPs }),
	boolField("completed_snippet_onboarding", func(p *Project) bool { return p.CompletedSnippetOnboarding }),
	jsonField("test_account_filters", listJSON, false, func(p *Project) json.RawMessage { return json.RawMessage(p.TestAccountFilters) }),
	boolField("test_account_filters_default_checked", func(p *Project) bool { return p.TestAccountFiltersDefaultChecked }),
	pathCleaningField(),
	boolField("is_demo", func(p *Project) bool { return p.IsDemo }),
	{name: "timezone",
		parse: func(raw json.RawMessage) (any, string) {
			var s string
			if isNull(raw) || json.Unmarshal(raw, &s) != nil {
				return nil, "Must be a time zone name."
			}
			if s == "" || s == "Local" {
				return nil, fmt.Sprintf("%q is not a valid IANA time zone.", s)
			}
			if _, err := time.LoadLocation(s); err != nil {
				return nil, fmt.Sprintf("%q is not a valid IANA time zone.", s)
			}
			return s, ""
		},
		get: func(p *Project) any { return p.Timezone }},
	jsonField("data_attributes", listJSON, false, func(p *Project) json.RawMessage { return json.RawMessage(p.DataAttributes) }),
	stringsField("person_display_name_properties", func(p *Project) []string { return p.PersonDisplayNameProperties }),
	jsonField("correlation_config", objectJSON, false, func(p *Project) json.RawMessage { return json.RawMessage(p.CorrelationConfig) }),
	boolField("autocapture_opt_out", func(p *Project) bool { return p.AutocaptureOptOut }),
	boolField("autocapture_exceptions_opt_in", func(p *Project) bool { return p.AutocaptureExceptionsOptIn }),
	boolField("autocapture_web_vitals_opt_in", func(p *Project) bool { return p.AutocaptureWebVitalsOptIn }),
	jsonField("autocapture_exceptions_errors_to_ignore", listJSON, false, func(p *Project) json.RawMessage {
		return json.RawMessage(p.AutocaptureExceptionsErrorsToIgnore)
	}),
	boolField("capture_console_log_opt_in", func(p *Project) bool { return p.CaptureConsoleLogOptIn }),
	boolField("capture_performance_opt_in", func(p *Project) bool { return p.CapturePerformanceOptIn }),
	boolField("session_recording_opt_in", func(p *Project) bool { return p.SessionRecordingOptIn }),
	{name: "session_recording_sample_rate",
		parse: func(raw json.RawMessage) (any, string) {
			if isNull(raw) {
				return nil, ""
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				// A bare number is what many clients send for a decimal.
				var n json.Number
				if json.Unmarshal(raw, &n) != nil {
					return nil, "Must be a decimal string from 0.00 to 1.00."
				}
				s = n.String()
			}
			if !sampleRate.MatchString(s) {
				return nil, "Must be a decimal string from 0.00 to 1.00 with at most two decimal places."
			}
			f, _ := strconv.ParseFloat(s, 64)
			return strconv.FormatFloat(f, 'f', 2, 64), ""
		},
		get: func(p *Project) any {
			return nullString(p.SessionRecordingSampleRate.String, p.SessionRecordingSampleRate.Valid)
		}},
	intField("session_recording_minimum_duration_milliseconds", 0, 30000, func(p *Project) any {
		return nullInt(p.SessionRecordingMinimumDurationMilliseconds.Int64, p.SessionRecordingMinimumDurationMilliseconds.Valid)
	}),
	jsonField("session_recording_linked_flag", objectJSON, true, func(p *Project) json.RawMessage { return nullJSON(p.SessionRecordingLinkedFlag) }),
	jsonField("session_recording_network_payload_capture_config", objectJSON, true, func(p *Project) json.RawMessage {
		return nullJSON(p.SessionRecordingNetworkPayloadCaptureConfig)
	}),
	jsonField("session_replay_config", objectJSON, true, func(p *Project) json.RawMessage { return nullJSON(p.SessionReplayConfig) }),
	boolField("access_control", func(p *Project) bool { return p.AccessControl }),
	intField("week_start_day", 0, 1, func(p *Project) any { return nullInt(p.WeekStartDay.Int64, p.WeekStartDay.Valid) }),
	intField("primary_dashboard", 1, 1<<53, func(p *Project) any { return nullInt(p.PrimaryDashboard.Int64, p.PrimaryDashboard.Valid) }),
	stringsField("live_events_columns", func(p *Project) []string { return p.LiveEventsColumns }),
	stringsField("recording_domains", func(p *Project) []string { return p.RecordingDomains }),
	boolField("inject_web_apps", func(p *Project) bool { return p.InjectWebApps }),
	jsonField("extra_settings", objectJSON, false, func(p *Project) json.RawMessage { return json.RawMessage(p.ExtraSettings) }),
	jsonField("modifiers", objectJSON, false, func(p *Project) json.RawMessage { return json.RawMessage(p.Modifiers) }),
	jsonField("has_completed_onboarding_for", objectJSON, false, func(p *Project) json.RawMessage {
		return json.RawMessage(p.HasCompletedOnboardingFor)
	}),
	boolField("surveys_opt_in", func(p *Project) bool { return p.SurveysOptIn }),
	boolField("heatmaps_opt_in", func(p *Project) bool { return p.HeatmapsOptIn }),
}

// intField accepts a JSON integer (or a string of one, as Django REST
// framework does) in [lo, hi], or null.
func intField(name string, lo, hi int64, get func(*Project) any) projectField {
	return projectField{name: name,
		parse: func(raw json.RawMessage) (any, string) {
			if isNull(raw) {
				return nil, ""
			}
			var n json.Number
			if err := json.Unmarshal(raw, &n); err != nil {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					return nil, "Must be an integer or null."
				}
				n = json.Number(s)
			}
			v, err := strconv.ParseInt(n.String(), 10, 64)
			if err != nil {
				return nil, "Must be an integer or null."
			}
			if v < lo || v > hi {
				return nil, fmt.Sprintf("Must be from %d to %d, or null.", lo, hi)
			}
			return v, ""
		},
		get: get,
	}
}

func nullString(s string, ok bool) any {
	if !ok {
		return nil
	}
	return s
}

func nullInt(n int64, ok bool) any {
	if !ok {
		return nil
	}
	return n
}

// jsonEqual compares two values by their JSON meaning (key order and
// spacing aside).
func jsonEqual(a, b any) bool {
	return bytes.Equal(canonical(a), canonical(b))
}

func canonical(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return b
	}
	out, _ := json.Marshal(x)
	return out
}

// checkPrimaryDashboard refuses a primary_dashboard that is not one of
// the project's dashboards (not deleted), within the write's transaction.
func checkPrimaryDashboard(ctx context.Context, tx *sqlx.Tx, projectID int64, values map[string]any) error {
	id, ok := values["primary_dashboard"].(int64)
	if !ok {
		return nil
	}
	var exists bool
	if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM dashboards WHERE project_id = $1 AND id = $2 AND NOT deleted)",
		projectID, id).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return &ValidationError{Attr: "primary_dashboard", Detail: fmt.Sprintf("Dashboard %d does not exist.", id)}
	}
	return nil
}
