# Shared by the smoke-*.sh client flows: BASE_URL and PERSONAL_API_KEY from
# the arguments, and small curl helpers.
set -euo pipefail
BASE=${1:?base URL, e.g. http://127.0.0.1:8000}
KEY=${2:?personal API key}
fail() { echo "smoke: $*" >&2; exit 1; }
# field NAME JSON: the first string, number or boolean value of NAME in JSON.
field() { printf '%s' "$2" | grep -o "\"$1\": *\(\"[^\"]*\"\|[0-9]*\|true\|false\)" | head -n 1 | sed -E 's/^"[^"]*": *"?([^"]*)"?$/\1/'; }
req() { # METHOD PATH [BODY] -> prints "STATUS BODY", with the personal key
  local out
  out=$(curl -sS -w '\n%{http_code}' -X "$1" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    ${3:+--data "$3"} "$BASE$2")
  printf '%s %s' "$(tail -n 1 <<<"$out")" "$(sed '$d' <<<"$out")"
}
