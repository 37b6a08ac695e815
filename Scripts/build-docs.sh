#!/usr/bin/env bash
# Builds the DocC documentation of the library products (see `modules` below)
# from symbol graphs, with warnings as errors (a link to a symbol that does not exist fails), and
# checks that every public symbol has a documentation comment of its own. No SwiftPM plugin needed: the
# symbol graphs come from 'swift package dump-symbol-graph' (an incremental debug build plus
# swift-symbolgraph-extract), the archives from the toolchain's 'docc'.
#
#   Scripts/build-docs.sh            → .build/docs/MODULE.doccarchive for each library
#   docc preview Sources/GroupPolicy/GroupPolicy.docc \
#       --additional-symbol-graph-dir .build/docs/symbol-graphs/GroupPolicy   (browse it locally)
#
# Rerun it after adding public API: a new undocumented symbol or a broken link fails it.
set -euo pipefail
cd "$(dirname "$0")/.."

# One archive per library. DocC links do not cross modules, so AppStoreGroups and
# GroupPolicyTooling name GroupPolicy's types in code voice (`ResponseLimits.default`), not as
# ``links``.
modules=(GroupPolicy GroupPolicyTooling AppStoreGroups GroupDecisions GroupDecisionsRedis GroupDecisionsTesting)
out=.build/docs

echo "Extracting symbol graphs"
graphs="$(dirname "$(swift build --show-bin-path)")/symbolgraph"
rm -rf "$graphs"
# SwiftPM also extracts the test runner's modules, which exist only once the tests are built, and
# fails there on a checkout whose tests were never built. Those graphs are not needed: its failure
# is judged by the graphs the checks below need, each of which must have been written now.
log="$(dirname "$graphs")/dump-symbol-graph.log"
swift package dump-symbol-graph --skip-synthesized-members --minimum-access-level public >"$log" 2>&1 || true
for module in "${modules[@]}" GroupPolicyCodegen; do
    if [[ ! -f "$graphs/$module.symbols.json" ]]; then
        cat "$log" >&2
        echo "error: no symbol graph for $module (the extraction's output is above)" >&2
        exit 1
    fi
done

rm -rf "$out"
for module in "${modules[@]}"; do
    mkdir -p "$out/symbol-graphs/$module"
    # The module's own graph, plus its extensions of other modules' types (Module@Other).
    cp "$graphs/$module.symbols.json" "$out/symbol-graphs/$module/"
    find "$graphs" -maxdepth 1 -name "$module@*.symbols.json" -exec cp {} "$out/symbol-graphs/$module/" \;
done

echo "Checking that every public symbol is documented"
# GroupPolicyCodegen (the plugin's generator) has no catalog, but its public API is checked too.
mkdir -p "$out/symbol-graphs/GroupPolicyCodegen"
cp "$graphs/GroupPolicyCodegen.symbols.json" "$out/symbol-graphs/GroupPolicyCodegen/"
python3 Scripts/check-doc-coverage.py "${modules[@]/#/$out/symbol-graphs/}" "$out/symbol-graphs/GroupPolicyCodegen"

for module in "${modules[@]}"; do
    echo "Converting $module"
    docc convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$out/symbol-graphs/$module" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "com.example.$module" \
        --warnings-as-errors \
        --output-path "$out/$module.doccarchive"
done
# The decision server's catalog: articles only (an executable has no public API to link).
echo "Converting group-decision-server"
docc convert "Sources/group-decision-server/GroupDecisionServer.docc" \
    --fallback-display-name "group-decision-server" \
    --fallback-bundle-identifier "com.example.group-decision-server" \
    --warnings-as-errors \
    --output-path "$out/group-decision-server.doccarchive"
echo "Documentation in $out"
