#!/usr/bin/env bash
# Runs every case of Scripts/worst-case-inputs.py under `/usr/bin/time -v` and prints
# "name  exit  wall-seconds  cpu-seconds  peak-RSS-MiB" per case (CPU time, user plus system, is
# the fairer figure on a shared machine). Usage:
#   Scripts/worst-case-run.sh /tmp/worst [path/to/group-policy] [timeout-seconds] [name-filter]
set -u
root=${1:?output directory of worst-case-inputs.py}
binary=$(realpath "${2:-.build/release/group-policy}")
limit=${3:-60}
filter=${4:-}
cd "$root" || exit 2
printf '%-28s %5s %9s %9s %9s\n' case exit seconds cpu peakMiB
while read -r name command; do
    [[ -n "$filter" && "$name" != *$filter* ]] && continue
    # shellcheck disable=SC2086
    timeout "$limit" /usr/bin/time -v "$binary" $command >/tmp/worst-case.out 2>/tmp/worst-case.err
    status=$?
    seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' /tmp/worst-case.err)
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' /tmp/worst-case.err)
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' /tmp/worst-case.err)
    printf '%-28s %5s %9s %9s %9s\n' "$name" "$status" "${seconds:-timeout}" "${cpu:--}" "${rss:--}"
done < commands.txt
