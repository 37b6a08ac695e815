#!/usr/bin/env python3
"""Fails when a public symbol has no documentation comment of its own.

Arguments: directories of symbol graphs (`Module.symbols.json`, `Module@Other.symbols.json`).
A symbol counts as written by hand when the graph gives its source location; members the compiler
synthesizes (Codable's `init(from:)`, an enum's `init(rawValue:)`) have none, and keep the
documentation of the protocol they implement. A hand-written symbol whose only comment is one
inherited from a protocol requirement (its `docComment` names another module) is undocumented.
"""

import json
import pathlib
import sys


def undocumented(graph_file):
    graph = json.loads(graph_file.read_text())
    module = graph["module"]["name"]
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open") or "location" not in symbol:
            continue
        comment = symbol.get("docComment")
        own = comment is not None and comment.get("module", module) == module
        if own and any(line["text"].strip() for line in comment["lines"]):
            continue
        location = symbol["location"]
        path = location["uri"].removeprefix("file://")
        line = location["position"]["line"] + 1
        title = ".".join(symbol["pathComponents"])
        yield "%s:%d: error: public %s '%s' has no documentation comment" % (
            path, line, symbol["kind"]["displayName"].lower(), title)


def main():
    problems = []
    files = 0
    for directory in sys.argv[1:]:
        for graph_file in sorted(pathlib.Path(directory).glob("*.symbols.json")):
            files += 1
            problems.extend(undocumented(graph_file))
    if files == 0:
        print("error: no symbol graphs in %s" % " ".join(sys.argv[1:]), file=sys.stderr)
        return 1
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
