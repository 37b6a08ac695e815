#!/usr/bin/env python3
"""Writes the adversarial inputs behind the worst-case figures of the Limits article.

Usage: Scripts/worst-case-inputs.py OUTPUT_DIR [--seed N]

Each case is a directory (or file) under OUTPUT_DIR sized at or near a documented limit: 100,000
rules, 10,000 capabilities, 32 MiB files, 1 MiB responses, wide matches, many documents, deep
directories. OUTPUT_DIR/commands.txt lists one `group-policy` command line per case (paths relative
to OUTPUT_DIR); run each under `/usr/bin/time -v` on a release build to get the time and peak RSS:

    swift build -c release --product group-policy
    Scripts/worst-case-inputs.py /tmp/worst
    cd /tmp/worst && while read -r name cmd; do
        /usr/bin/time -v ../path/to/group-policy $cmd ...
    done < commands.txt

The inputs are deterministic for a given seed.
"""

import json
import os
import random
import sys

FORMAT = "group-policy/v1"
MIB = 1 << 20


def write(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        if isinstance(value, str):
            handle.write(value)
        else:
            json.dump(value, handle, separators=(",", ":"))


def policy(pid, capabilities, rules, invariants=(), aliases=None):
    document = {
        "format": FORMAT,
        "id": pid,
        "capabilities": {name: name for name in capabilities},
        "rules": rules,
    }
    if invariants:
        document["invariants"] = list(invariants)
    if aliases:
        document["sandbox"] = {"productAliases": aliases}
    return document


def group_id_rules(count, invariant=True):
    rules = [{"id": f"r{i}", "match": {"groupId": f"g{i}"}, "capabilities": ["a"]} for i in range(count)]
    invariants = [{"id": "never-b", "never": {"capabilities": ["b"]}}] if invariant else []
    return policy("ids", ["a", "b"], rules, invariants)


def wide_random(rng, pid, rules, names_per_match, capabilities=64, ids=400, products=400, roles=40, types=40,
                entitlements=8, invariants=4):
    """Random rules, each naming many values per dimension: the wide matches of a diff's worst case."""
    caps = [f"c{i}" for i in range(capabilities)]

    def some(prefix, universe):
        count = rng.randint(1, names_per_match)
        return sorted({f"{prefix}{rng.randrange(universe)}" for _ in range(count)})

    out = []
    for index in range(rules):
        match = {}
        shape = rng.random()
        if shape < 0.3:
            match["groupId"] = some("g", ids)
        if shape > 0.2:
            match["productId"] = some("p", products)
            match["role"] = some("R", roles) if rng.random() < 0.7 else "*"
        if rng.random() < 0.5:
            match["groupType"] = some("T", types) + ["ORGANIZATION"]
        rule = {"id": f"r{index}", "match": match, "capabilities": rng.sample(caps, rng.randint(1, 4))}
        if rng.random() < 0.3:
            rule["effect"] = "deny"
        if rng.random() < 0.3:
            rule["requires"] = {"entitlements": [f"e{rng.randrange(entitlements)}"]}
        out.append(rule)
    invs = []
    for index in range(invariants):
        match = {"productId": some("p", products)} if index % 2 == 0 else {"groupType": "ORGANIZATION"}
        invs.append({"id": f"inv{index}", "never" if index % 3 else "always":
                     {"match": match, "capabilities": rng.sample(caps, 2)}})
    return policy(pid, caps, out, invs)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root = sys.argv[1]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    rng = random.Random(seed)
    os.makedirs(root, exist_ok=True)
    commands = []

    # 1. 20,000 rules that each name a group id, with an invariant: check and diff X X (< 2 s).
    write(f"{root}/groupid-20k/p.json", group_id_rules(20_000))
    commands.append(("check-groupid-20k", "check groupid-20k/p.json"))
    commands.append(("diff-groupid-20k", "diff groupid-20k/p.json groupid-20k/p.json"))

    # 2. The rule limit: 100,000 rules naming a group id each (load, check, eval, explain, diff).
    write(f"{root}/groupid-100k/p.json", group_id_rules(100_000))
    commands.append(("check-groupid-100k", "check groupid-100k/p.json"))
    commands.append(("diff-groupid-100k", "diff groupid-100k/p.json groupid-100k/p.json"))

    # 3. 100,000 role-level rules over 1,000 products and 100 roles, 10,000 capabilities.
    caps = [f"cap{i}" for i in range(10_000)]
    rules = []
    for index in range(100_000):
        rules.append({
            "id": f"r{index}",
            "match": {"groupType": "ORGANIZATION", "productId": f"p{index % 1000}", "role": f"R{index % 100}"},
            "capabilities": [caps[index % 10_000]],
        })
    invariants = [{"id": "never-last", "never": {"match": {"productId": "p1"}, "capabilities": [caps[-1]]}}]
    write(f"{root}/rules-100k/p.json", policy("rules", caps, rules, invariants))
    commands.append(("check-rules-100k", "check rules-100k/p.json"))
    commands.append(("diff-rules-100k", "diff rules-100k/p.json rules-100k/p.json"))

    # 4. Random wide policies: several documents, many names per match; two variants to diff.
    for variant in ("old", "new"):
        local = random.Random(seed * 1000 + (0 if variant == "old" else 1))
        for doc in range(4):
            document = wide_random(local, f"w{doc}", rules=300, names_per_match=60)
            write(f"{root}/wide/{variant}/w{doc}.json", document)
    commands.append(("check-wide", "check wide/old"))
    commands.append(("diff-wide", "diff wide/old wide/new"))

    # 5. 10,000 capabilities granted per product: a diff whose every scenario differs in thousands
    # of capabilities (the old version grants them, the new one does not).
    caps = [f"cap{i}" for i in range(9_999)]
    grants = [{"id": "all", "match": {"productId": [f"p{i}" for i in range(300)], "role": "*"},
               "capabilities": caps}]
    write(f"{root}/many-caps/old.json", policy("caps", caps, grants))
    write(f"{root}/many-caps/new.json", policy("caps", caps + ["extra"], []))
    commands.append(("diff-many-caps", "diff many-caps/old.json many-caps/new.json"))

    # 6. Many frames: rules naming 1,000 group types and 1,000 group ids.
    rules = [{"id": f"t{i}", "match": {"groupType": f"T{i}"}, "capabilities": ["a"]} for i in range(1000)]
    rules += [{"id": f"g{i}", "match": {"groupId": f"g{i}"}, "capabilities": ["b"]} for i in range(1000)]
    invariants = [{"id": "never-c", "never": {"capabilities": ["c"]}}]
    write(f"{root}/frames/p.json", policy("frames", ["a", "b", "c"], rules, invariants))
    commands.append(("check-frames", "check frames/p.json"))
    commands.append(("diff-frames", "diff frames/p.json frames/p.json"))

    # 7. Direct rules with long lists, checked one by one: `groupId: "*"` with 20,000 products.
    products = [f"p{i}" for i in range(20_000)]
    rules = [{"id": f"d{i}", "match": {"groupId": "*", "productId": products, "role": "*"},
              "capabilities": ["a"], **({"effect": "deny"} if i % 2 else {})} for i in range(8)]
    invariants = [{"id": "always-a", "always": {"match": {"productId": "p0"}, "capabilities": ["a"]}}]
    write(f"{root}/direct/p.json", policy("direct", ["a", "b"], rules, invariants))
    commands.append(("check-direct", "check direct/p.json"))
    commands.append(("diff-direct", "diff direct/p.json direct/p.json"))

    # 8a. The listed-names limit (1,000,000 per policy) reached in each dimension with the shortest
    # distinct names (what makes the most names per byte): 5,000 rules of 198 values and a
    # capability, and an invariant: 995,001 names; two different policies of each shape for `diff`.
    def short_names(prefix, count):
        digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        names = []
        for index in range(count):
            text = ""
            while True:
                text = digits[index % 62] + text
                index //= 62
                if index == 0:
                    break
            names.append(prefix + text)
        return names

    for key in ("productId", "groupId", "role", "groupType"):
        for variant in ("a", "b"):
            names = short_names(variant, 5_000 * 198)
            rules = [{"id": f"r{i}", "match": {key: names[i * 198:(i + 1) * 198]}, "capabilities": ["a"]}
                     for i in range(5_000)]
            invariants = [{"id": "never-b", "never": {"capabilities": ["b"]}}]
            write(f"{root}/names-{key}/{variant}.json", policy("names", ["a", "b"], rules, invariants))
        commands.append((f"check-names-{key}", f"check names-{key}/a.json"))
        commands.append((f"diff-names-{key}", f"diff names-{key}/a.json names-{key}/b.json"))
        commands.append((f"eval-names-{key}", f"eval --policy names-{key}/a.json --response response-1mib.json"))
        commands.append((f"explain-names-{key}",
                         f"explain --policy names-{key}/a.json --response response-1mib.json --capability a"))
    # What one command reads (32 MiB together): four policies of a million names each in one
    # `check`, and test files alternating between two of them (each read counts).
    commands.append(("check-names-four", "check names-productId names-groupId"))
    for index in range(6):
        variant = "a" if index % 2 == 0 else "b"
        write(f"{root}/names-tests/t{index}.tests.json",
              {"format": "group-policy-tests/v1", "policy": f"../names-groupId/{variant}.json",
               "cases": [{"name": "no groups", "response": {"groups": []}, "expect": {"capabilities": []}}]})
    commands.append(("test-names-alternating", "test names-tests"))
    # The workspace limit (100): every workspace matching every group of a 1 MiB response, and
    # 100 workspaces of 9,990 products each (about the names limit).
    groups = [{"groupId": str(10**17 + i), "groupType": "ORGANIZATION",
               "roles": [{"productId": f"p{i % 1000}", "role": "ADMIN"}]} for i in range(9_800)]
    write(f"{root}/response-9800.json", {"groups": groups})
    workspaces = [{"id": f"w{i}", "adminRoles": ["ADMIN", "R1"]} for i in range(100)]
    write(f"{root}/workspaces/all.json", {**policy("ws", ["a"], [{"id": "r", "capabilities": ["a"]}]),
                                          "workspaces": workspaces})
    workspaces = [{"id": f"w{i}", "match": {"productId": [f"p{j}" for j in range(9_990)]}} for i in range(100)]
    write(f"{root}/workspaces/products.json", {**policy("ws", ["a"], [{"id": "r", "capabilities": ["a"]}]),
                                               "workspaces": workspaces})
    commands.append(("eval-workspaces-all", "eval --policy workspaces/all.json --response response-9800.json"))
    commands.append(("eval-workspaces-products",
                     "eval --policy workspaces/products.json --response response-9800.json"))
    # The invariant limit (1,000): 999 invariants over a space of about a million role entries.
    products = [f"p{i}" for i in range(333_000)]
    invariants = [{"id": f"i{i}", "never": {"capabilities": ["b"], "match": {"productId": f"p{i}", "role": "NONE"}}}
                  for i in range(999)]
    write(f"{root}/invariants/p.json", policy("inv", ["a", "b"], [
        {"id": "r", "match": {"productId": products, "role": "ADMIN"}, "capabilities": ["a"]}], invariants))
    commands.append(("check-invariants-999", "check invariants/p.json"))
    commands.append(("diff-invariants-999", "diff invariants/p.json invariants/p.json"))
    # Aliases: 499,000 of them (two names each), and a rule naming every source.
    names = short_names("s", 499_000)
    aliases = {name: f"t{index % 1000}" for index, name in enumerate(names)}
    write(f"{root}/names-aliases/a.json", policy("aliases", ["a", "b"], [
        {"id": "r", "match": {"productId": [f"t{i}" for i in range(1000)]}, "capabilities": ["a"]}],
        [{"id": "never-b", "never": {"capabilities": ["b"]}}], aliases))
    commands.append(("check-names-aliases", "check names-aliases/a.json"))
    commands.append(("diff-names-aliases", "diff names-aliases/a.json names-aliases/a.json"))

    # 8. A 32 MiB policy (just under the file limit): rules with long product lists, refused at the
    # listed-names limit.
    rules = []
    size = 0
    index = 0
    while size < 31 * MIB:
        rule = {"id": f"r{index}", "match": {"productId": [f"prod.{index}.{j}" for j in range(200)]},
                "capabilities": ["a"]}
        size += len(json.dumps(rule)) + 1
        rules.append(rule)
        index += 1
    write(f"{root}/big-file/p.json", policy("big", ["a", "b"], rules,
                                            [{"id": "never-b", "never": {"capabilities": ["b"]}}]))
    commands.append(("check-big-file", "check big-file/p.json"))
    commands.append(("diff-big-file", "diff big-file/p.json big-file/p.json"))

    # 9. A 1 MiB response (the response limit) against the 100,000-rule policy.
    groups = []
    size = 0
    index = 0
    while size < MIB - 200 and len(groups) < 10_000:
        group = {"groupId": f"g{index}", "groupType": "ORGANIZATION",
                 "roles": [{"productId": f"p{index % 1000}", "role": f"R{index % 100}"}]}
        size += len(json.dumps(group)) + 1
        if size >= MIB - 200:
            break
        groups.append(group)
        index += 1
    write(f"{root}/response-1mib.json", {"groups": groups})
    commands.append(("eval-100k-1mib", "eval --policy rules-100k/p.json --response response-1mib.json"))
    commands.append(("explain-100k-1mib", "explain --policy rules-100k/p.json --response response-1mib.json --capability cap9999"))
    commands.append(("eval-groupid-100k-1mib",
                     "eval --policy groupid-100k/p.json --response response-1mib.json"))
    commands.append(("explain-groupid-100k-1mib",
                     "explain --policy groupid-100k/p.json --response response-1mib.json --capability a"))
    # One group with 10,000 role entries (the per-group limit) within 1 MiB.
    roles = [{"productId": f"p{i % 1000}", "role": f"R{i % 100}"} for i in range(10_000)]
    write(f"{root}/response-entries.json", {"groups": [{"groupId": "g1", "groupType": "ORGANIZATION",
                                                        "roles": roles}]})
    commands.append(("eval-100k-entries", "eval --policy rules-100k/p.json --response response-entries.json"))
    commands.append(("explain-100k-entries",
                     "explain --policy rules-100k/p.json --response response-entries.json --capability cap9999"))

    # 10. A test file of many cases sharing the 1 MiB response (the cases read it once).
    cases = [{"name": f"case {i}", "responseFile": "../response-1mib.json",
              "context": {"environment": "Production", "entitlements": [f"e{i % 50}"]},
              "expect": {"excludes": ["b"]}} for i in range(20_000)]
    write(f"{root}/tests/p.json", group_id_rules(2_000, invariant=False))
    write(f"{root}/tests/p.tests.json", {"format": "group-policy-tests/v1", "policy": "p.json", "cases": cases})
    commands.append(("test-many-cases", "test tests"))

    # 11. Deep and wide directories: 31 levels, a policy at each, 2,000 small policies at the bottom.
    path = f"{root}/deep"
    small = policy("small", ["a"], [{"id": "r", "match": {"groupType": "ORGANIZATION"}, "capabilities": ["a"]}])
    for level in range(31):
        path = f"{path}/d{level}"
        write(f"{path}/p{level}.json", small)
    for index in range(2_000):
        write(f"{path}/many/p{index}.json", small)
    commands.append(("check-deep", "check deep"))
    commands.append(("test-deep", "test deep"))
    commands.append(("generate-swift-100k", "generate-swift rules-100k"))

    # 12. Near the work limit: 10,000 capabilities, a grant and a deny over 380 products.
    caps = [f"c{i}" for i in range(10_000)]
    products = [f"p{i}" for i in range(380)]
    rules = [{"id": "g", "match": {"productId": products, "role": "ADMIN"}, "capabilities": caps[:5000]},
             {"id": "d", "effect": "deny", "match": {"productId": products, "role": "NONE"},
              "capabilities": caps[2500:7500]}]
    write(f"{root}/near-work/p.json", policy("near", caps, rules))
    commands.append(("diff-near-work-limit", "diff near-work/p.json near-work/p.json"))

    # 13. Over the work limit though within the scenario budget: 7.8 million scenarios of a grant and
    # a deny over 300 products, with 20 rules naming group ids.
    products = [f"p{i}" for i in range(300)]
    rules = [{"id": "g", "match": {"productId": products, "role": "ADMIN"}, "capabilities": ["a"]},
             {"id": "d", "effect": "deny", "match": {"productId": products, "role": "NONE"},
              "capabilities": ["a"]}]
    rules += [{"id": f"x{i}", "match": {"groupId": f"g{i}"}, "capabilities": ["b"]} for i in range(20)]
    write(f"{root}/over-work/p.json", policy("over", ["a", "b", "c"], rules))
    commands.append(("diff-over-work-limit", "diff over-work/p.json over-work/p.json"))

    # 14. `test` amplified by small test files: each case is a few bytes, its decision is large.
    tests = "group-policy-tests/v1"
    # a. --coverage: 100 group-level rules, a 10,000-group response shared by 1,000 cases (each
    # decision holds a million grants; the cases share one).
    caps = [f"c{i}" for i in range(100)]
    rules = [{"id": f"r{i}", "match": {"groupType": "ORGANIZATION"}, "capabilities": [caps[i]]} for i in range(100)]
    write(f"{root}/amplified/coverage/p.json", policy("coverage", caps, rules))
    groups = [{"groupId": f"g{i}", "groupType": "ORGANIZATION"} for i in range(10_000)]
    write(f"{root}/amplified/groups-10k.json", {"groups": groups})
    cases = [{"name": f"case {i}", "responseFile": "../groups-10k.json", "expect": {"includes": ["c0"]}}
             for i in range(1_000)]
    write(f"{root}/amplified/coverage/p.tests.json", {"format": tests, "policy": "p.json", "cases": cases})
    commands.append(("test-coverage-shared", "test --coverage amplified/coverage"))
    # b. 10,000 `includes` of a name not granted, against 9,999 granted capabilities: each failure
    # line listed every granted name.
    caps = [f"cap{i}" for i in range(10_000)]
    write(f"{root}/amplified/includes/p.json",
          policy("includes", caps, [{"id": "all", "capabilities": caps[:-1]}]))
    case = {"name": "missing", "response": {"groups": [{"groupId": "1", "groupType": "ORGANIZATION"}]},
            "expect": {"includes": [caps[-1]] * 10_000}}
    write(f"{root}/amplified/includes/p.tests.json", {"format": tests, "policy": "p.json", "cases": [case]})
    commands.append(("test-includes-missing", "test amplified/includes"))
    # c. 100,000 group expectations of groups the 10,000-group response does not have: each listed
    # every group id of the response.
    write(f"{root}/amplified/absent/p.json", policy("absent", ["a"], [{"id": "r", "capabilities": ["a"]}]))
    case = {"name": "absent", "responseFile": "../groups-10k.json",
            "expect": {"groups": {f"x{i}": [] for i in range(100_000)}}}
    write(f"{root}/amplified/absent/p.tests.json", {"format": tests, "policy": "p.json", "cases": [case]})
    commands.append(("test-groups-absent", "test amplified/absent"))
    # d. `excludes` of a capability 100,000 rules grant: the reasons were de-duplicated pairwise.
    rules = [{"id": f"r{i}", "match": {"groupType": "ORGANIZATION"}, "capabilities": ["a"]} for i in range(100_000)]
    write(f"{root}/amplified/excludes/p.json", policy("excludes", ["a"], rules))
    case = {"name": "excluded", "response": {"groups": [{"groupId": "1", "groupType": "ORGANIZATION"}]},
            "expect": {"excludes": ["a"]}}
    write(f"{root}/amplified/excludes/p.tests.json", {"format": tests, "policy": "p.json", "cases": [case]})
    commands.append(("test-excludes-rules", "test amplified/excludes"))
    # e. `capabilities` of 5,000 names in 300 cases, against 5,000 others granted: the lists were
    # compared pairwise.
    caps = [f"cap{i}" for i in range(10_000)]
    write(f"{root}/amplified/lists/p.json",
          policy("lists", caps, [{"id": "half", "capabilities": caps[5_000:]}]))
    cases = [{"name": f"case {i}", "response": {"groups": [{"groupId": "1", "groupType": "ORGANIZATION"}]},
              "context": {"entitlements": [f"e{i}"]}, "expect": {"capabilities": caps[:5_000]}}
             for i in range(300)]
    write(f"{root}/amplified/lists/p.tests.json", {"format": tests, "policy": "p.json", "cases": cases})
    commands.append(("test-capabilities-lists", "test amplified/lists"))
    # f. `workspaces: []` against a decision of a million memberships (100 workspaces every one of
    # 10,000 groups joins), in 100 cases sharing it; and 1,000 cases expecting no capability in a
    # group that holds 10,000 (each failure listed them all).
    workspaces = [{"id": f"w{i}"} for i in range(100)]
    write(f"{root}/amplified/workspaces/p.json",
          {**policy("ws", ["a"], [{"id": "r", "capabilities": ["a"]}]), "workspaces": workspaces})
    cases = [{"name": f"case {i}", "responseFile": "../groups-10k.json", "expect": {"workspaces": []}}
             for i in range(100)]
    write(f"{root}/amplified/workspaces/p.tests.json", {"format": tests, "policy": "p.json", "cases": cases})
    commands.append(("test-workspaces-listed", "test amplified/workspaces"))
    write(f"{root}/amplified/present/p.json",
          policy("present", caps, [{"id": "all", "capabilities": caps}]))
    write(f"{root}/amplified/present/groups-100.json", {"groups": groups[:100]})
    cases = [{"name": f"case {i}", "responseFile": "groups-100.json", "expect": {"groups": {f"g{i % 100}": []}}}
             for i in range(1_000)]
    write(f"{root}/amplified/present/p.tests.json", {"format": tests, "policy": "p.json", "cases": cases})
    commands.append(("test-groups-present", "test amplified/present"))

    # 15. Workspace memberships in a diff: 100 workspaces of 1,000 products each, every one with
    # NONE made an administrator role (100,000 role changes, one per workspace and product); the
    # same over 9,990 products (over the work limit: refused at once); and the 9,990-product policy
    # against itself (no workspace differs: nothing enumerated).
    for count in (1_000, 9_990):
        for suffix, admin in (("", None), ("-admin", ["ADMIN", "NONE"])):
            workspaces = [{"id": f"w{i}", "match": {"productId": [f"p{j}" for j in range(count)]},
                           **({"adminRoles": admin} if admin else {})} for i in range(100)]
            write(f"{root}/workspaces/diff-{count}{suffix}.json",
                  {**policy("ws", ["a"], [{"id": "r", "capabilities": ["a"]}]), "workspaces": workspaces})
    commands.append(("diff-workspaces-1000", "diff workspaces/diff-1000.json workspaces/diff-1000-admin.json"))
    commands.append(("diff-workspaces-9990", "diff workspaces/diff-9990.json workspaces/diff-9990-admin.json"))
    commands.append(("diff-workspaces-same", "diff workspaces/products.json workspaces/products.json"))
    # A capability diff of the same shape: 100 capabilities of 1,000 products extended to NONE.
    caps = [f"c{i}" for i in range(100)]
    for suffix, roles in (("", "ADMIN"), ("-none", ["ADMIN", "NONE"])):
        write(f"{root}/rows/p{suffix}.json", policy("rows", caps, [
            {"id": "r", "match": {"productId": [f"p{j}" for j in range(1_000)], "role": roles},
             "capabilities": caps}]))
    commands.append(("diff-rows-100k", "diff rows/p.json rows/p-none.json"))

    with open(f"{root}/commands.txt", "w") as handle:
        for name, command in commands:
            handle.write(f"{name} {command}\n")


if __name__ == "__main__":
    main()
