#!/usr/bin/env bash
# Runs `group-policy fetch` against its worst cases, served by Scripts/worst-case-fetch-server.py
# on 127.0.0.1, under `/usr/bin/time -v`, and prints the columns of Scripts/worst-case-run.sh:
# "name  exit  wall-seconds  cpu-seconds  peak-RSS-MiB" (CPU time is user plus system). Usage:
#   Scripts/worst-case-fetch.sh [path/to/group-policy] [name-filter]
# The slow cases (trickle, silent) take the default --timeout of 10 s each.
set -u
here=$(cd "$(dirname "$0")" && pwd)
binary=$(realpath "${1:-.build/release/group-policy}")
filter=${2:-}
key="$here/../Tests/ServingTestSupport/Fixtures/test-key.p8"
work=$(mktemp -d /tmp/worst-case-fetch.XXXXXX)
mkfifo "$work/server-input"
python3 "$here/worst-case-fetch-server.py" <"$work/server-input" >"$work/server-output" &
server=$!
exec 3>"$work/server-input"  # the server exits when this closes
trap 'exec 3>&-; wait "$server" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q '^PORT ' "$work/server-output" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^PORT / {print $2}' "$work/server-output")
[[ -n "$port" ]] || { echo "the fake server did not start" >&2; exit 2; }

printf '%-28s %5s %9s %9s %9s\n' case exit seconds cpu peakMiB
while read -r name command; do
    [[ -n "$filter" && "$name" != *$filter* ]] && continue
    # shellcheck disable=SC2086
    timeout 300 /usr/bin/time -v "$binary" fetch $command --key-id K --issuer-id I --bundle-id com.example.app \
        --private-key "$key" --base-url "http://127.0.0.1:$port" >"$work/out" 2>"$work/err"
    status=$?
    seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/err")
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$work/err")
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/err")
    printf '%-28s %5s %9s %9s %9s\n' "$name" "$status" "${seconds:-timeout}" "${cpu:--}" "${rss:--}"
done <<'CASES'
groups-1MiB-10000-groups     groups --transaction-id max
groups-1MiB-plus-1           groups --transaction-id over
groups-length-10^23          groups --transaction-id hugelength
groups-endless-no-length     groups --transaction-id endless
groups-endless-chunked       groups --transaction-id chunked
groups-429-retry-in-1h       groups --transaction-id ratelimit
groups-429-retry-3600-sec    groups --transaction-id ratelimitsec
groups-500-forever           groups --transaction-id error500
groups-trickle-1-byte-a-sec  groups --transaction-id trickle
groups-never-answers         groups --transaction-id silent
members-all-1000-pages       members --group-id maxpages --all
members-all-page-1001        members --group-id overpages --all
members-all-500-from-p500    members --group-id failat500 --all
members-all-cycle-A-B-A      members --group-id cycle --all
CASES
