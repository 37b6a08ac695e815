#!/usr/bin/env bash
# Runs every case of Scripts/worst-case-inputs.py under `/usr/bin/time -v` and prints
# "name  exit  wall-seconds  cpu-seconds  peak-RSS-MiB  output-KiB" per case (CPU time, user plus
# system, is the fairer figure on a shared machine; the output is what the command printed on
# standard output and standard error, which a failing `test` case must keep small). Usage:
#   Scripts/worst-case-run.sh /tmp/worst [path/to/group-policy] [timeout-seconds] [name-filter]
set -u
root=${1:?output directory of worst-case-inputs.py}
binary=$(realpath "${2:-.build/release/group-policy}")
limit=${3:-60}
filter=${4:-}
cd "$root" || exit 2
printf '%-28s %5s %9s %9s %9s %10s\n' case exit seconds cpu peakMiB outputKiB
while read -r name command; do
    [[ -n "$filter" && "$name" != *$filter* ]] && continue
    # shellcheck disable=SC2086
    timeout "$limit" /usr/bin/time -v -o /tmp/worst-case.time "$binary" $command >/tmp/worst-case.out 2>/tmp/worst-case.err
    status=$?
    touch /tmp/worst-case.time  # not written when the timeout stopped the command
    seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' /tmp/worst-case.time)
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' /tmp/worst-case.time)
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' /tmp/worst-case.time)
    output=$(( ($(stat -c %s /tmp/worst-case.out) + $(stat -c %s /tmp/worst-case.err)) / 1024 ))
    printf '%-28s %5s %9s %9s %9s %10s\n' "$name" "$status" "${seconds:-timeout}" "${cpu:--}" "${rss:--}" "$output"
    rm -f /tmp/worst-case.time
done < commands.txt
