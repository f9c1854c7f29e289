#!/usr/bin/env bash
# The projects flow a new user runs with curl, against a running server:
# list projects, create one, patch it, reset its token, read its activity,
# delete it. Usage: scripts/smoke-projects.sh BASE_URL PERSONAL_API_KEY
source "$(dirname "$0")/smoke-lib.sh"

r=$(req GET /api/organizations/@current/projects/); [ "${r%% *}" = 200 ] || fail "list: $r"
org=$(field organization "$r"); [ -n "$org" ] || fail "no organization in $r"
echo "list: 200, organization $org, count $(field count "$r")"

r=$(req POST "/api/organizations/$org/projects/" '{"name": "Smoke test", "timezone": "Europe/Paris"}')
[ "${r%% *}" = 201 ] || fail "create: $r"
id=$(field id "${r#* }"); token=$(field api_token "$r")
echo "create: 201, project $id"

r=$(req PATCH "/api/organizations/$org/projects/$id/" '{"name": "Smoke test (renamed)", "app_urls": ["https://smoke.test"], "week_start_day": 1}')
[ "${r%% *}" = 200 ] && [ "$(field name "$r")" = "Smoke test (renamed)" ] || fail "patch: $r"
echo "patch: 200, renamed"

r=$(req PATCH "/api/organizations/$org/projects/$id/reset_token/")
new=$(field api_token "$r")
[ "${r%% *}" = 200 ] && [ -n "$new" ] && [ "$new" != "$token" ] || fail "reset_token: $r"
echo "reset_token: 200, new token"

r=$(req GET "/api/organizations/$org/projects/$id/activity/")
[ "${r%% *}" = 200 ] && [ "$(field count "$r")" = 3 ] || fail "activity (want 3 entries): $r"
echo "activity: 200, 3 entries (created, updated, token reset)"

r=$(req DELETE "/api/organizations/$org/projects/$id/"); [ "${r%% *}" = 204 ] || fail "delete: $r"
r=$(req GET "/api/organizations/$org/projects/$id/"); [ "${r%% *}" = 404 ] || fail "after delete: $r"
echo "delete: 204, then 404"
echo "smoke: the projects flow works"
