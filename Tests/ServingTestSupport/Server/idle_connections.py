#!/usr/bin/env python3
"""Holds idle connections to 127.0.0.1:PORT for a test, outside the test process.

Each line on standard input is a number N: it opens N more connections that send nothing and
never close, then prints "ok". When standard input closes, it exits and every connection closes.

The connections live here, not in the test process, because Foundation's Process.run() on Linux
reads past the end of glibc's /proc/self/fd buffer once a process holds about 1,350 descriptors
(swift-corelibs-foundation pull request 5472): a test holding a thousand sockets made any other
test's child process launch crash the whole test run.
"""
import socket
import sys

port = int(sys.argv[1])
held = []
for line in sys.stdin:
    for _ in range(int(line)):
        held.append(socket.create_connection(("127.0.0.1", port)))
    print("ok", flush=True)
