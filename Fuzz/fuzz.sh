#!/usr/bin/env bash
# Builds and runs the libFuzzer targets for a bounded time each.
#
#   Fuzz/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 600 s; every target)
#
# Targets: responses (Apple's documents), policies (policy files, the position-tracking reader,
# compilation, evaluation), testfiles (policy test files). Each is compiled with
# -sanitize=fuzzer,address together with Sources/GroupPolicy and Sources/GroupPolicyTooling, as one
# module named GroupPolicy (so the tooling's `import GroupPolicy` is ignored), linked with
# Sources/GroupPolicyBasics, built first as a module of its own and instrumented the same way. The
# corpus grows in .build/fuzz/corpus/TARGET (seeded from Policies/, Examples/ and the test
# fixtures); crashes are written to Fuzz/artifacts/ — turn each into a regression test. A summary
# line per target reports the time, executions and corpus size.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(responses policies testfiles)

build=.build/fuzz
mkdir -p "$build" Fuzz/artifacts
sources=$(find Sources/GroupPolicy Sources/GroupPolicyTooling -name '*.swift' | sort)
basics=$(find Sources/GroupPolicyBasics -name '*.swift' | sort)
flags=(-O -g -sanitize=fuzzer,address -parse-as-library -swift-version 6
    -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault -package-name GroupPolicy)

entry() {
    case "$1" in
        responses) echo Fuzz/Targets/FuzzResponses.swift ;;
        policies) echo Fuzz/Targets/FuzzPolicies.swift ;;
        testfiles) echo Fuzz/Targets/FuzzTestFiles.swift ;;
        *) echo "unknown target $1 (responses, policies, testfiles)" >&2; exit 2 ;;
    esac
}

seed() {
    local target=$1 corpus=$2
    mkdir -p "$corpus"
    case "$target" in
        responses)
            cp Examples/*.json "$corpus"/ 2>/dev/null || true
            printf '%s' '{"members":[{"appTransactionId":"700000000000000000"}],"hasMore":false}' > "$corpus/members.json"
            ;;
        policies)
            for file in Policies/*.json; do case "$file" in *.tests.json) ;; *) cp "$file" "$corpus"/ ;; esac; done
            cp Tests/GroupPolicyCLITests/Fixtures/typo-policy.json "$corpus"/
            ;;
        testfiles)
            cp Policies/*.tests.json "$corpus"/
            ;;
    esac
}

echo "==> building GroupPolicyBasics"
mkdir -p "$build/modules"
# shellcheck disable=SC2086
swiftc "${flags[@]}" -module-name GroupPolicyBasics -whole-module-optimization -emit-module \
    -emit-module-path "$build/modules/GroupPolicyBasics.swiftmodule" -c $basics -o "$build/GroupPolicyBasics.o"

for target in "${targets[@]}"; do
    binary="$build/fuzz-$target"
    echo "==> building $target"
    # shellcheck disable=SC2086
    swiftc "${flags[@]}" -module-name GroupPolicy -I "$build/modules" $sources "$(entry "$target")" \
        "$build/GroupPolicyBasics.o" -o "$binary"
    corpus="$build/corpus/$target"
    seed "$target" "$corpus"
    echo "==> fuzzing $target for ${seconds}s"
    log="$build/fuzz-$target.log"
    FUZZ_POLICIES_DIR="$PWD/Policies" "$binary" "$corpus" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 -artifact_prefix=Fuzz/artifacts/"$target"- \
        2>"$log" || { echo "!! $target found a crash; see $log and Fuzz/artifacts/" >&2; tail -40 "$log" >&2; exit 1; }
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    files=$(find "$corpus" -type f | wc -l)
    echo "==> $target: ${seconds}s, $runs executions, corpus $files files, no crash"
done
