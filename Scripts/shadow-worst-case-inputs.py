#!/usr/bin/env python3
"""Writes the shadow reports behind the time and memory figures of `group-policy shadow`.

Usage: Scripts/shadow-worst-case-inputs.py OUTPUT_DIR

Each case is a report at or near the CLI's 64 MiB limit (`ShadowReport.maximumJSONBytes`), valid or
not, shaped to cost a reader the most: millions of rule ids, millions of tiny values, millions of
keys, nesting up to the limit. OUTPUT_DIR/commands.txt lists one `group-policy` command line per
case, in the format Scripts/worst-case-run.sh reads, which runs each under `/usr/bin/time -v`:

    swift build -c release --product group-policy
    Scripts/shadow-worst-case-inputs.py /tmp/shadow-worst
    Scripts/worst-case-run.sh /tmp/shadow-worst

Every case must be answered or refused within 10 s and 1 GB on a release build (see the DocC
article "Rolling out a policy change", section "The report's JSON"). The inputs are deterministic.
"""

import os
import sys

MIB = 1 << 20
HEAD = ('{"liveRevision":"49c9b1f4e538bd3a","candidateRevision":"ec499e3986364ea5",'
        '"since":"2027-01-15T08:00:00.250Z","decisions":100000,"changedDecisions":90000,"dropped":0,'
        '"skippedDecisions":0,')


def row(index, ids, live=None, width=15):
    """A row listing `ids` distinct rule ids (`r` and digits, or digits alone from 16 bytes)."""
    live = len(ids) // 2 if live is None else live
    name = (lambda n: "r%0*d" % (width - 1, n)) if width < 16 else (lambda n: "%0*d" % (width, n))
    quoted = ['"%s"' % name(n) for n in ids]
    return ('{"capability":"c%05d","change":"lost","groupType":"ORGANIZATION","liveRules":[%s],'
            '"candidateRules":[%s],"groups":2,"decisions":1,'
            '"examples":[{"decisionId":"d","customerHash":null,"groupId":"g"}]}'
            % (index, ",".join(quoted[:live]), ",".join(quoted[live:])))


def report(rows, tail=""):
    return HEAD + '"changes":[' + ",".join(rows) + "]" + tail + "}"


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    cases = {}
    # A normal report: three rows.
    cases["shadow-small"] = report([row(i, range(i * 4, i * 4 + 4)) for i in range(3)])
    # 62 MiB, valid: 10,000 rows of 350 rule ids, 3.5 million in all.
    rows = [row(i, range(i * 350, i * 350 + 350)) for i in range(10_000)]
    cases["shadow-valid-62mib"] = report(rows)
    # 61 MiB, valid: one row listing 3.35 million rule ids of 16 bytes (each a string of its own).
    cases["shadow-one-list-61mib"] = report([row(0, range(3_350_000), live=3_350_000, width=16)])
    # 62 MiB, invalid at its end: the last row is the first again.
    cases["shadow-duplicate-row-62mib"] = report(rows[:-1] + rows[:1])
    # 63 MiB, invalid: 33 million arrays nested up to the depth limit under an unknown key.
    nested = "[" * 30 + "]" * 30
    cases["shadow-nested-63mib"] = HEAD + '"extra":[' + ",".join([nested] * 1_082_000) + '],"changes":[]}'
    # 63 MiB, invalid: 33 million numbers where rows should be.
    cases["shadow-numbers-63mib"] = report(["0"] * ((63 * MIB - 300) // 2))
    # 63 MiB, invalid: 5.2 million keys in one object, the last repeating the first.
    keys = ",".join('"k%d":0' % i for i in range(5_200_000))
    cases["shadow-keys-63mib"] = HEAD + '"extra":{' + keys + ',"k0":1},"changes":[]}'
    with open(f"{root}/commands.txt", "w") as commands:
        for name, text in cases.items():
            assert len(text) <= 64 * MIB, name
            with open(f"{root}/{name}.json", "w") as handle:
                handle.write(text)
            commands.write(f"{name} shadow {name}.json\n")


if __name__ == "__main__":
    main()
