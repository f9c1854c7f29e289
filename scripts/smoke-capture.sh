#!/usr/bin/env bash
# The capture flow an SDK or script runs, with curl, against a running
# server: send a batch (plain and gzip), a single event, see a bad event
# refused with the field named, the project marked as having events, and
# the anonymous pageview and identified signup counted as one funnel.
# Usage: scripts/smoke-capture.sh BASE_URL PERSONAL_API_KEY
source "$(dirname "$0")/smoke-lib.sh"
# status_body OUT: curl -w '\n%{http_code}' output as "STATUS BODY", for
# the capture requests, which carry no personal key.
status_body() { printf '%s %s' "$(tail -n 1 <<<"$1")" "$(sed '$d' <<<"$1")"; }

r=$(req GET /api/organizations/@current/projects/)
[ "${r%% *}" = 200 ] || fail "list projects: $r"
org=$(field organization "$r"); id=$(field id "${r#* }"); token=$(field api_token "$r")
[ -n "$token" ] || fail "no project token in $r"

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
batch="{\"api_key\": \"$token\", \"batch\": [
  {\"event\": \"\$pageview\", \"distinct_id\": \"anon-1\", \"timestamp\": \"$now\", \"properties\": {\"\$current_url\": \"https://smoke.test/\"}},
  {\"event\": \"\$identify\", \"distinct_id\": \"smoke@example.com\", \"properties\": {\"\$anon_distinct_id\": \"anon-1\", \"\$set\": {\"plan\": \"free\"}}}]}"
r=$(status_body "$(curl -sS -w '\n%{http_code}' -H 'Content-Type: application/json' --data "$batch" "$BASE/batch/")")
[ "${r%% *}" = 200 ] && [ "$(field status "$r")" = 1 ] || fail "batch: $r"
echo "batch: 200 {\"status\": 1}"

r=$(status_body "$(printf '%s' "{\"token\": \"$token\", \"event\": \"signup\", \"distinct_id\": \"smoke@example.com\"}" | gzip |
  curl -sS -w '\n%{http_code}' -H 'Content-Type: text/plain' --data-binary @- "$BASE/i/v0/e/?compression=gzip-js")")
[ "${r%% *}" = 200 ] || fail "gzip single event: $r"
echo "gzip single event: 200"

r=$(status_body "$(curl -sS -w '\n%{http_code}' -H 'Content-Type: application/json' \
  --data "{\"api_key\": \"$token\", \"batch\": [{\"event\": \"ok\", \"distinct_id\": \"d\"}, {\"event\": \"no distinct id\"}]}" "$BASE/batch/")")
[ "${r%% *}" = 400 ] && [ "$(field attr "$r")" = "batch[1].distinct_id" ] || fail "bad event: $r"
echo "bad event: 400, attr batch[1].distinct_id"

r=$(status_body "$(curl -sS -w '\n%{http_code}' -H 'Content-Type: application/json' --data '{"api_key": "phc_unknown", "event": "e", "distinct_id": "d"}' "$BASE/capture/")")
[ "${r%% *}" = 401 ] || fail "unknown token: $r"
echo "unknown token: 401"

r=$(req GET "/api/organizations/$org/projects/$id/")
[ "${r%% *}" = 200 ] && [ "$(field ingested_event "$r")" = true ] || fail "ingested_event: $r"
echo "project: ingested_event true"

# The anonymous pageview and the identified signup are one person's funnel.
r=$(req POST "/api/projects/$id/insights/funnel/" '{"events": [{"id": "$pageview"}, {"id": "signup"}], "date_from": "-1d"}')
[ "${r%% *}" = 200 ] && [ "$(printf '%s' "$r" | grep -o '"count": *1,' | wc -l)" = 2 ] || fail "funnel: $r"
echo "funnel \$pageview -> signup: 1 person at each step"
echo "smoke: the capture flow works"
