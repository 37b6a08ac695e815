#!/usr/bin/env bash
# Checks that a module's folders follow the order its Architecture article gives them: each folder
# may name only the types of its own folder and of the folders listed before it.
#
# The order has one source of truth, the numbered list in `Sources/<Module>/<Module>.docc/
# Architecture.md` whose items start with the folder in backquotes (`3. \`JSON/\`: ...`). For each
# module named, the script finds the top-level types (struct, class, enum, protocol, actor,
# typealias; an extension defines none, a private or fileprivate type is its file's own) that each
# folder defines, and prints one line per file line that names a type of a folder listed after
# its own:
#
#   Sources/GroupPolicy/Policy/PolicyParser.swift:12: error: ByteInterner is defined in Compilation/, listed after Policy/
#
# Comments and string literals do not count (code inside a string's interpolation does). It also
# fails when a folder under Sources/<Module> is missing from the list, when the list names a folder
# that does not exist, and for a Swift file outside every folder.
#
#   Scripts/check-layering.sh                          every library module
#   Scripts/check-layering.sh GroupPolicy              the modules named
#   Scripts/check-layering.sh --root DIR GroupPolicy   a tree other than this repository
#   Scripts/check-layering.sh --self-test              proves on a small made-up tree that a
#                                                      back-reference and an unlisted folder fail
#
# Needs bash and python3 (standard library only); takes well under a second.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ "${1:-}" == "--root" ]]; then
    [[ $# -ge 2 ]] || { echo "usage: $0 [--root DIR] [MODULE...] | --self-test" >&2; exit 2; }
    root="$2"
    shift 2
fi

if [[ "${1:-}" == "--self-test" ]]; then
    tree="$(mktemp -d)"
    trap 'rm -rf "$tree"' EXIT
    mkdir -p "$tree/Sources/Demo/Demo.docc" "$tree/Sources/Demo/Early" "$tree/Sources/Demo/Late" \
        "$tree/Sources/Demo/Unlisted"
    cat >"$tree/Sources/Demo/Demo.docc/Architecture.md" <<'EOF'
# Architecture

1. `Early/`: what comes first.
2. `Late/`: what uses it.
EOF
    cat >"$tree/Sources/Demo/Early/Reader.swift" <<'EOF'
/// Reads. Mentions Writer in a comment, which does not count.
struct Reader {
    let note = "Writer in a string does not count, \(Writer.self) in its interpolation does"
    /* A block comment naming Writer, /* nested Writer */ still a comment. */
    let raw = #"Writer in a raw string, "quoted", does not count"#
    func write(to writer: Writer) {}
}

private struct Hidden {}
EOF
    cat >"$tree/Sources/Demo/Late/Writer.swift" <<'EOF'
struct Writer {
    let reader: Reader
    enum Nested {}
}

extension Reader {}
EOF
    cat >"$tree/Sources/Demo/Unlisted/Other.swift" <<'EOF'
struct Other {}
EOF
    expected="Sources/Demo/Early/Reader.swift:3: error: Writer is defined in Late/, listed after Early/
Sources/Demo/Early/Reader.swift:6: error: Writer is defined in Late/, listed after Early/
Sources/Demo/Unlisted/: error: the folder is not in the numbered list of Sources/Demo/Demo.docc/Architecture.md"
    status=0
    actual="$("$0" --root "$tree" Demo 2>&1)" || status=$?
    if [[ $status -ne 1 || "$actual" != "$expected" ]]; then
        printf 'self-test failed: a back-reference tree gave exit %s and:\n%s\nexpected exit 1 and:\n%s\n' \
            "$status" "$actual" "$expected" >&2
        exit 1
    fi
    # The same tree with the violations removed passes.
    rm -r "$tree/Sources/Demo/Unlisted"
    sed -i 's/Writer\.self/Reader.self/; s/to writer: Writer/to reader: Reader/' "$tree/Sources/Demo/Early/Reader.swift"
    status=0
    actual="$("$0" --root "$tree" Demo 2>&1)" || status=$?
    if [[ $status -ne 0 ]]; then
        printf 'self-test failed: a clean tree gave exit %s and:\n%s\n' "$status" "$actual" >&2
        exit 1
    fi
    echo "check-layering self-test: a back-reference and an unlisted folder fail, a clean tree passes"
    exit 0
fi

if [[ $# -eq 0 ]]; then
    set -- GroupPolicyBasics GroupPolicy GroupPolicyTooling AppStoreGroups GroupDecisions GroupDecisionsRedis GroupDecisionsTesting
fi

exec python3 - "$root" "$@" <<'PY'
import os
import re
import sys

root, modules = sys.argv[1], sys.argv[2:]
KEYWORDS = re.compile(r"\b(struct|class|enum|protocol|actor|typealias)\s+([A-Za-z_][A-Za-z0-9_]*)")
NOT_NAMES = {"func", "var", "let", "subscript", "init", "deinit", "case", "where"}
IDENTIFIER = re.compile(r"`?([A-Za-z_][A-Za-z0-9_]*)`?")
ITEM = re.compile(r"^\s*(\d+)\.\s+`([^`/]+)/`")


def code_only(text):
    """The text with comments and string literals blanked (newlines kept), interpolations kept."""
    out = list(text)
    n = len(text)

    def blank(start, end):
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    def skip_code(i, closing):
        """Lexes code from i; with closing=')' stops after the parenthesis that ends it."""
        depth = 0
        while i < n:
            c = text[i]
            if text.startswith("//", i):
                end = text.find("\n", i)
                end = n if end < 0 else end
                blank(i, end)
                i = end
            elif text.startswith("/*", i):
                start, level = i, 0
                while i < n:
                    if text.startswith("/*", i):
                        level += 1
                        i += 2
                    elif text.startswith("*/", i):
                        level -= 1
                        i += 2
                        if level == 0:
                            break
                    else:
                        i += 1
                blank(start, i)
            elif c == '"' or (c == "#" and re.match(r"#+\"", text[i:i + 64])):
                i = skip_string(i)
            elif closing and c == "(":
                depth += 1
                i += 1
            elif closing and c == ")":
                if depth == 0:
                    return i + 1
                depth -= 1
                i += 1
            else:
                i += 1
        return i

    def skip_string(i):
        start = i
        hashes = 0
        while text[i] == "#":
            hashes += 1
            i += 1
        multiline = text.startswith('"""', i)
        i += 3 if multiline else 1
        terminator = ('"""' if multiline else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        segment = start
        while i < n:
            if text.startswith(escape, i):
                after = i + len(escape)
                if after < n and text[after] == "(":
                    blank(segment, after + 1)
                    i = skip_code(after + 1, ")")
                    segment = i - 1  # The closing parenthesis is blanked with the string.
                    continue
                i = after + 1
            elif text.startswith(terminator, i):
                i += len(terminator)
                break
            elif text[i] == "\n" and not multiline:
                break
            else:
                i += 1
        blank(segment, i)
        return i

    skip_code(0, None)
    return "".join(out)


def top_level_types(code):
    """Names of the types a file defines at top level and that other files can see."""
    depth_at = []
    depth = 0
    for c in code:
        depth_at.append(depth)
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
    names = []
    for match in KEYWORDS.finditer(code):
        name = match.group(2)
        if name in NOT_NAMES or depth_at[match.start()] != 0:
            continue
        line_start = code.rfind("\n", 0, match.start()) + 1
        modifiers = code[line_start:match.start()]
        if re.search(r"\b(private|fileprivate)\b", modifiers):
            continue
        names.append(name)
    return names


failures = []
for module in modules:
    source = os.path.join(root, "Sources", module)
    article = os.path.join(source, module + ".docc", "Architecture.md")
    article_name = os.path.relpath(article, root)
    if not os.path.isdir(source):
        failures.append(f"Sources/{module}/: error: no such module")
        continue
    if not os.path.isfile(article):
        failures.append(f"{article_name}: error: no Architecture article listing the module's folders")
        continue
    order = []
    with open(article, encoding="utf-8") as handle:
        for line in handle:
            item = ITEM.match(line)
            if item:
                order.append(item.group(2))
    if not order:
        failures.append(f"{article_name}: error: no numbered list of folders (items like 1. `Folder/`: ...)")
        continue
    rank = {folder: index for index, folder in enumerate(order)}
    present = sorted(
        entry for entry in os.listdir(source)
        if os.path.isdir(os.path.join(source, entry)) and not entry.endswith(".docc")
    )
    for folder in present:
        if folder not in rank:
            failures.append(f"Sources/{module}/{folder}/: error: the folder is not in the numbered list of {article_name}")
    for folder in order:
        if folder not in present:
            failures.append(f"{article_name}: error: the list names {folder}/, which is not a folder of Sources/{module}")

    files = []
    for directory, subdirectories, names in os.walk(source):
        subdirectories[:] = sorted(d for d in subdirectories if not d.endswith(".docc"))
        for name in sorted(names):
            if name.endswith(".swift"):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, source)
                folder = relative.split(os.sep)[0] if os.sep in relative else None
                with open(path, encoding="utf-8") as handle:
                    files.append((os.path.relpath(path, root), folder, code_only(handle.read())))
    defined = {}
    for path, folder, code in files:
        if folder is None:
            failures.append(f"{path}:1: error: the file is in no folder of {article_name}")
            continue
        for name in top_level_types(code):
            defined.setdefault(name, folder)
    for path, folder, code in files:
        if folder not in rank:
            continue
        for number, line in enumerate(code.split("\n"), start=1):
            reported = set()
            for match in IDENTIFIER.finditer(line):
                name = match.group(1)
                owner = defined.get(name)
                if owner is None or owner not in rank or rank[owner] <= rank[folder] or name in reported:
                    continue
                before = line[:match.start()].rstrip()
                if before.endswith(".") and not before.endswith(module + "."):
                    continue  # A member of something else (`Explanation.Group`), not the type.
                reported.add(name)
                failures.append(f"{path}:{number}: error: {name} is defined in {owner}/, listed after {folder}/")

def order_key(failure):
    match = re.match(r"([^:]*):(\d+):", failure)
    return (match.group(1), int(match.group(2))) if match else (failure.split(":")[0], 0)


for failure in sorted(set(failures), key=order_key):
    print(failure)
sys.exit(1 if failures else 0)
PY
