#!/usr/bin/env python3
"""Measures the playground's scenario matrix, `diff` and `check` on wide policies.

Generates the policy of the matrix's bound: 10,000 capabilities, one rule granting them all, and
one rule per product (800 and 1,600 products), each granting one capability to any role of its
product. For each, three rounds of: a fresh `group-policy playground` under GNU `/usr/bin/time -v`
answering one `POST /api/matrix` (the body the page sends, with one product rule edited so that
cells change), timed at the client, its answer's bytes counted, then stopped to read its peak
resident memory and CPU time; then `diff SAVED EDITED` and `check SAVED` under `/usr/bin/time -v`.
Prints each figure's median and its spread (min to max) over the rounds: wall times at the client,
and CPU times (user and system), which a busy machine inflates less.

    swift build -c release --product group-policy
    Scripts/measure-matrix.py [--binary .build/release/group-policy] [--rounds 3] [--products 800 1600]
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wide_policy(products, capabilities=10_000):
    """The policy as a string: `c0`… `c9999`, rule `all`, and rules `product-0`… with one capability each."""
    names = [f"c{index}" for index in range(capabilities)]
    rules = [{"id": "all", "capabilities": names}]
    for index in range(products):
        rules.append({"id": f"product-{index}", "capabilities": [names[index % capabilities]],
                      "match": {"productId": f"com.example.product{index}", "role": "*"}})
    policy = {"format": "group-policy/v1", "id": "wide", "capabilities": {name: "C" for name in names},
              "rules": rules}
    return json.dumps(policy, separators=(",", ":"))


def time_figures(path):
    """Wall seconds, peak resident MiB and CPU seconds (user and system) from a `/usr/bin/time -v` report."""
    text = open(path, encoding="utf-8").read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
    cpu = sum(float(re.search(pattern, text).group(1))
              for pattern in (r"User time \(seconds\): (\S+)", r"System time \(seconds\): (\S+)"))
    return seconds, rss, cpu


def matrix_round(binary, directory, edited):
    report = os.path.join(directory, "..", "playground.time")
    process = subprocess.Popen(["/usr/bin/time", "-v", "-o", report, binary, "playground", directory, "--port", "0"],
                               stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().split()[-1].rstrip("/")
        port = url.rsplit(":", 1)[1]
        body = json.dumps({"files": {"p.json": edited}, "environment": "production", "entitlements": []}).encode()
        request = urllib.request.Request(url + "/api/matrix", data=body, method="POST", headers={
            "Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}", "Host": f"127.0.0.1:{port}"})
        start = time.monotonic()
        with urllib.request.urlopen(request, timeout=600) as answer:
            size = 0
            while chunk := answer.read(1 << 20):
                size += len(chunk)
        seconds = time.monotonic() - start
    finally:
        # The tool is /usr/bin/time's child: stopping it makes time write its report.
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        for child in children:
            os.kill(int(child), signal.SIGTERM)
        process.wait()
    _, rss, cpu = time_figures(report)
    return seconds, rss, size, cpu


def command_round(binary, arguments, directory):
    report = os.path.join(directory, "command.time")
    completed = subprocess.run(["/usr/bin/time", "-v", "-o", report, binary] + arguments, cwd=directory,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds, rss, cpu = time_figures(report)
    return seconds, rss, completed.returncode, completed.stdout.splitlines()[:1], cpu


def spread(values, unit, digits=2):
    return (f"median {statistics.median(values):.{digits}f} {unit} "
            f"(min {min(values):.{digits}f}, max {max(values):.{digits}f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "group-policy"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--products", type=int, nargs="+", default=[800, 1600])
    arguments = parser.parse_args()
    binary = os.path.abspath(arguments.binary)

    for products in arguments.products:
        scratch = tempfile.mkdtemp(prefix="matrix-measure-")
        try:
            saved = wide_policy(products)
            # The edit the page sends: the first product rule grants a second capability.
            edited = saved.replace('"capabilities":["c0"]', '"capabilities":["c0","c9999"]', 1)
            policies = os.path.join(scratch, "Policies")
            os.makedirs(policies)
            with open(os.path.join(policies, "p.json"), "w", encoding="utf-8") as file:
                file.write(saved)
            with open(os.path.join(scratch, "edited.json"), "w", encoding="utf-8") as file:
                file.write(edited)
            print(f"{products} products: policy of {len(saved.encode()) / 1024:.0f} KiB")
            matrix = [matrix_round(binary, policies, edited) for _ in range(arguments.rounds)]
            print("  POST /api/matrix: " + spread([m[0] for m in matrix], "s") + ", "
                  + spread([m[3] for m in matrix], "s CPU of the playground, start included") + ", "
                  + spread([m[1] for m in matrix], "MiB peak RSS", 0) + ", "
                  + spread([m[2] / 1024 for m in matrix], "KiB answered", 0))
            for name, command in [("diff", ["diff", "Policies/p.json", "edited.json"]),
                                  ("check", ["check", "Policies/p.json"])]:
                runs = [command_round(binary, command, scratch) for _ in range(arguments.rounds)]
                print(f"  {name}: " + spread([r[0] for r in runs], "s") + ", " + spread([r[4] for r in runs], "s CPU") + ", "
                      + spread([r[1] for r in runs], "MiB peak RSS", 0)
                      + f", exit {runs[0][2]}, first line {runs[0][3]}")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
