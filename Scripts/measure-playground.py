#!/usr/bin/env python3
"""Measures the playground's answer times for the bundled policies, as the page asks for them.

Starts `group-policy playground` (the release build by default) on a scratch copy of Policies/ and
Examples/, sends each route the body the page sends while an author edits team-workspace.json
(one edited file, the bundled organization-admin response, one entitlement), one round to warm
up and then N rounds, and prints each route's median, minimum, 90th percentile and maximum in
milliseconds,
measured at the client over HTTP on 127.0.0.1 (connection included: the page opens one per
request); and the five requests the page sends after an edit, sent at once, until the last
answer.

    swift build -c release --product group-policy
    Scripts/measure-playground.py [--binary .build/release/group-policy] [--rounds 20]
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "group-policy"))
    parser.add_argument("--rounds", type=int, default=20)
    arguments = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="playground-measure-")
    for folder in ["Policies", "Examples"]:
        shutil.copytree(os.path.join(ROOT, folder), os.path.join(scratch, folder))
    process = subprocess.Popen([arguments.binary, "playground", "Policies", "--port", "0"], cwd=scratch,
                               stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().split()[-1].rstrip("/")
        with open(os.path.join(scratch, "Policies", "team-workspace.json"), encoding="utf-8") as file:
            saved = file.read()
        edited = saved.replace('"capabilities": ["workspace.manage-settings"]',
                               '"capabilities": ["workspace.manage-settings", "workspace.export"]', 1)
        with open(os.path.join(scratch, "Examples", "organization-admin.json"), encoding="utf-8") as file:
            response = file.read()
        customer = {"files": {"team-workspace.json": edited}, "response": response,
                    "responseName": "Examples/organization-admin.json", "environment": "production",
                    "entitlements": ["com.example.teams.pro"]}
        # The versions a page loaded: a save names the one its edit was made from.
        with urllib.request.urlopen(url + "/api/files") as answer:
            versions = {file["name"]: file["version"] for file in json.load(answer)["files"]}
        pinned = dict(customer, baseline={"team-workspace.json": saved.replace(
            '"capabilities": ["workspace.view", "workspace.members"]', '"capabilities": ["workspace.view"]', 1)})
        routes = [
            ("GET /api/files", "GET", "/api/files", None),
            ("POST /api/check", "POST", "/api/check", customer),
            ("POST /api/decision", "POST", "/api/decision", customer),
            ("POST /api/explain", "POST", "/api/explain", dict(customer, capability="workspace.export")),
            ("POST /api/tests", "POST", "/api/tests", customer),
            ("POST /api/matrix", "POST", "/api/matrix", customer),
            # The verdict against a baseline the author pinned (one more policy set to compile).
            ("POST /api/matrix pinned", "POST", "/api/matrix", pinned),
            # Add test from the Decision: the case, and the test file's text with it.
            ("POST /api/add-test", "POST", "/api/add-test",
             dict(customer, capability="workspace.export", group="281474976710656")),
            # Saving the saved text: a check of the directory, then an atomic write.
            ("POST /api/save", "POST", "/api/save",
             {"file": "team-workspace.json", "files": {"team-workspace.json": saved}, "versions": versions}),
        ]

        def ask(method, path, body):
            data = None if body is None else json.dumps(body).encode()
            headers = {"Content-Type": "application/json", "Origin": url} if body is not None else {}
            request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
            start = time.perf_counter()
            with urllib.request.urlopen(request) as answer:
                answer.read()
                status = answer.status
            elapsed = (time.perf_counter() - start) * 1000
            if status != 200:
                sys.exit(f"{method} {path} answered {status}")
            return elapsed

        times = {name: [] for name, *_ in routes}
        for round_ in range(arguments.rounds + 1):
            for name, method, path, body in routes:
                elapsed = ask(method, path, body)
                if round_ > 0:  # The first round warms up.
                    times[name].append(elapsed)
        # What the page waits for after an edit: its five requests sent at once.
        refresh = [route for route in routes if route[0] in
                   ("POST /api/check", "POST /api/decision", "POST /api/explain", "POST /api/tests", "POST /api/matrix")]
        times["one edit: 5 at once"] = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(refresh)) as pool:
            for round_ in range(arguments.rounds + 1):
                start = time.perf_counter()
                list(pool.map(lambda route: ask(*route[1:]), refresh))
                if round_ > 0:
                    times["one edit: 5 at once"].append((time.perf_counter() - start) * 1000)
        print(f"{arguments.rounds} requests per route, after one to warm up; milliseconds at the client")
        print(f"{'route':<26}{'median':>8}{'min':>8}{'p90':>8}{'max':>8}")
        for name, values in times.items():
            p90 = statistics.quantiles(values, n=10)[-1]
            print(f"{name:<26}{statistics.median(values):8.1f}{min(values):8.1f}{p90:8.1f}{max(values):8.1f}")
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
