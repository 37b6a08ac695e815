#!/usr/bin/env bash
# Proves on Linux what can be proved about the Apple-platform builds: every Swift file imports
# FoundationEssentials only inside `#if canImport(FoundationEssentials)` with an `#else` that
# imports Foundation (Apple's SDKs have no FoundationEssentials), and the package and its tests
# compile with every such condition taken the Apple way. It builds a copy of the tree in which
# `canImport(FoundationEssentials)` is `false`, so the `#else import Foundation` branches compile
# against the toolchain's full Foundation.
#
# Not proved here (no Apple SDK on Linux): the CryptoKit signer (`#if canImport(CryptoKit)`), the
# Darwin branches of the platform C modules, and URLSession without FoundationNetworking.
#
#   Scripts/check-apple-imports.sh     (about as long as a cold debug build with tests)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "Checking that FoundationEssentials is imported only under canImport(FoundationEssentials)"
bad=$(git ls-files --cached --others --exclude-standard -- '*.swift' | while read -r f; do
    [ -f "$f" ] || continue
    awk -v f="$f" '
        /^[[:space:]]*#if/ { d++; c[d] = $0; e[d] = 0 }
        /^[[:space:]]*#else/ { e[d] = 1 }
        /^[[:space:]]*#endif/ { d-- }
        /^[[:space:]]*(@[a-zA-Z]+ )*((public|package|internal) )?import FoundationEssentials/ {
            ok = 0
            for (i = 1; i <= d; i++) if (c[i] ~ /canImport\(FoundationEssentials\)/ && !e[i]) ok = 1
            if (!ok) print f ":" NR
        }' "$f"
done)
if [ -n "$bad" ]; then
    echo "error: FoundationEssentials imported outside '#if canImport(FoundationEssentials)':" >&2
    echo "$bad" >&2
    exit 1
fi
missing=$(git ls-files --cached --others --exclude-standard -- '*.swift' | while read -r f; do
    [ -f "$f" ] || continue
    awk -v f="$f" '
        /^[[:space:]]*#if[[:space:]]+canImport\(FoundationEssentials\)/ { inside = 1; line = NR; sawElse = 0; next }
        inside && /^[[:space:]]*#else/ { sawElse = 1; next }
        inside && sawElse && /import Foundation([[:space:]]|$)/ { inside = 0; next }
        inside && /^[[:space:]]*#endif/ { print f ":" line; inside = 0 }' "$f"
done)
if [ -n "$missing" ]; then
    echo "error: '#if canImport(FoundationEssentials)' without '#else import Foundation':" >&2
    echo "$missing" >&2
    exit 1
fi

copy=$(mktemp -d /tmp/group-policy-apple-imports.XXXXXX)
trap 'rm -rf "$copy"' EXIT
git ls-files --cached --others --exclude-standard -z | while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue
    mkdir -p "$copy/$(dirname "$f")"
    cp "$f" "$copy/$f"
done
changed=$(grep -rl --include='*.swift' 'canImport(FoundationEssentials)' "$copy" || true)
for f in $changed; do
    sed -i 's/canImport(FoundationEssentials)/false/g' "$f"
done
echo "Building the package and its tests with the Apple-platform import branches ($(echo "$changed" | grep -c . || true) files)"
# A scratch path of its own inside the repository's .build, so a second run is incremental.
log="$copy/build.log"
if ! swift build --build-tests --package-path "$copy" --scratch-path "$PWD/.build/apple-imports" \
    -Xswiftc -warnings-as-errors >"$log" 2>&1; then
    grep -E 'error|warning:' "$log" | head -40 >&2
    echo "error: the Apple-platform import branches do not build" >&2
    exit 1
fi
tail -n 1 "$log"
