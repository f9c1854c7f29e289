#!/usr/bin/env bash
# The insights flow a new user runs with curl, against a running server:
# find their project, create a trends insight, rename it, view it, read
# my_last_viewed, soft-delete it (DELETE is refused), see it gone.
# Usage: scripts/smoke-insights.sh BASE_URL PERSONAL_API_KEY
source "$(dirname "$0")/smoke-lib.sh"

r=$(req GET /api/organizations/@current/projects/); [ "${r%% *}" = 200 ] || fail "list projects: $r"
project=$(field id "${r#* }"); [ -n "$project" ] || fail "no project in $r"
insights=/api/projects/$project/insights
echo "projects: 200, project $project"

r=$(req POST "$insights/" '{"name": "Daily pageviews", "filters": {"insight": "TRENDS", "events": [{"id": "$pageview", "type": "events", "math": "total"}], "date_from": "-7d", "interval": "day"}}')
[ "${r%% *}" = 201 ] || fail "create: $r"
id=$(field id "${r#* }"); short=$(field short_id "$r")
[ -n "$id" ] && [ ${#short} = 8 ] || fail "create answered no id or short_id: $r"
echo "create: 201, insight $id ($short)"

r=$(req PATCH "$insights/$id/" '{"name": "Daily pageviews (renamed)", "description": "smoke test"}')
[ "${r%% *}" = 200 ] && [ "$(field name "$r")" = "Daily pageviews (renamed)" ] || fail "rename: $r"
echo "rename: 200"

r=$(req POST "$insights/$id/viewed/"); [ "${r%% *}" = 200 ] || fail "viewed: $r"
r=$(req GET "$insights/my_last_viewed/")
[ "${r%% *}" = 200 ] && [ "$(field id "${r#* }")" = "$id" ] || fail "my_last_viewed does not start with the insight: $r"
echo "viewed: 200, first in my_last_viewed"

r=$(req GET "$insights/?short_id=$short"); [ "$(field count "$r")" = 1 ] || fail "list by short_id: $r"
r=$(req GET "$insights/$id/?format=csv"); [ "${r%% *}" = 200 ] && grep -q "Daily pageviews (renamed)" <<<"$r" || fail "csv: $r"
echo "list by short_id: 1; csv: 200"

r=$(req DELETE "$insights/$id/"); [ "${r%% *}" = 405 ] || fail "DELETE should be refused: $r"
r=$(req GET "$insights/$id/"); [ "${r%% *}" = 200 ] || fail "the insight did not survive DELETE: $r"
r=$(req PATCH "$insights/$id/" '{"deleted": true}')
[ "${r%% *}" = 200 ] && grep -q '"deleted":true' <<<"$r" || fail "soft delete: $r"
echo "DELETE: 405; PATCH deleted: 200"

r=$(req GET "$insights/$id/"); [ "${r%% *}" = 404 ] || fail "retrieve after delete: $r"
r=$(req GET "$insights/?short_id=$short"); [ "$(field count "$r")" = 0 ] || fail "still listed: $r"
r=$(req GET "$insights/my_last_viewed/"); grep -q "\"id\":$id," <<<"$r" && fail "still in my_last_viewed: $r"
# A deleted insight's own log is gone with it; the project's log keeps it.
r=$(req GET "$insights/activity/")
[ "$(field activity "$r")" = deleted ] && [ "$(field item_id "$r")" = "$id" ] || fail "activity (want the deletion first): $r"
echo "gone: 404, not listed, not in my_last_viewed; the project's activity starts with the deletion"
echo "smoke: the insights flow works"
