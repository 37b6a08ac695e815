#!/usr/bin/env python3
"""Keeps the editor schemas in Policies/schema/ from drifting from the loader.

Every policy and test file the project ships must validate against its schema, and every file in
Tests/GroupPolicyCLITests/Fixtures/schema/ (each broken in one way the loader rejects) must not.
The loader's side of the same files is checked by the CLI tests ('group-policy check' fails on
each invalid fixture), and a Swift test compares the schemas' keys with the loader's.
Uses the maintained 'jsonschema' package from PyPI.
"""
import glob
import json
import sys

from jsonschema import Draft202012Validator

root = sys.argv[1] if len(sys.argv) > 1 else "."


def load(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


validators = {}
for kind, name in (("policy", "group-policy.schema.json"), ("tests", "group-policy-tests.schema.json")):
    schema = load(f"{root}/Policies/schema/{name}")
    Draft202012Validator.check_schema(schema)
    validators[kind] = Draft202012Validator(schema)


def kind_of(path):
    return "tests" if path.endswith(".tests.json") else "policy"


valid = [
    path
    for pattern in ("Policies/**/*.json", "Tests/GroupPolicyCLITests/Fixtures/diff/*.json")
    for path in sorted(glob.glob(f"{root}/{pattern}", recursive=True))
    if not path.endswith(".schema.json")
]
valid += [f"{root}/Tests/GroupPolicyCLITests/Fixtures/check/{name}" for name in ("unused-capability.json", "violated-invariant.json")]
invalid = sorted(glob.glob(f"{root}/Tests/GroupPolicyCLITests/Fixtures/schema/*.json"))

failures = 0
for path in valid:
    errors = list(validators[kind_of(path)].iter_errors(load(path)))
    for error in errors:
        print(f"{path}: {'/'.join(map(str, error.absolute_path)) or '$'}: {error.message}")
    failures += bool(errors)
for path in invalid:
    if validators[kind_of(path)].is_valid(load(path)):
        print(f"{path}: the schema accepts a file the loader rejects")
        failures += 1
print(f"schemas: {len(valid)} valid files accepted, {len(invalid)} invalid files rejected, {failures} failures")
sys.exit(1 if failures else 0)
