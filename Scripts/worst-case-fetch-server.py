#!/usr/bin/env python3
"""A fake of Apple's groups endpoints on 127.0.0.1 for Scripts/worst-case-fetch.sh: the largest
answers the documented limits allow and the slowest servers, fast enough that the client is what is
measured. It checks no token. It binds a free port, prints `PORT n`, and exits when its standard
input closes.

The answer is chosen by the id in the path:
  groups: max (1 MiB of 10,000 groups), over (1 MiB + 1), hugelength (Content-Length 10^23, then
          silence), endless (no Content-Length, bytes forever), chunked (chunked encoding forever),
          trickle (1 byte a second), silent (never answers), ratelimit (429 Retry-After now+3600 s
          in ms), ratelimitsec (429 Retry-After: 3600), error500 (500 forever)
  members: maxpages (1,000 pages of 10,000 members, last hasMore false), overpages (never ends),
           cycle (A -> B -> A), failat500 (500 from page 500 on)
"""
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MIB = 1 << 20


def groups_body(size):
    groups = []
    for index in range(10_000):
        groups.append('{"groupId":"g%05d","groupType":"ORGANIZATION","roles":[{"productId":"p.%05d","role":"ADMIN"}]}' % (index, index))
    text = ('{"groups":[' + ",".join(groups) + "]}").encode()
    assert len(text) <= size, len(text)
    return text[:-1] + b" " * (size - len(text)) + b"}"


GROUPS_MAX = groups_body(MIB)
GROUPS_OVER = groups_body(MIB + 1)

MEMBER_ID_LENGTH = 76


def members_prefix():
    members = ",".join('{"appTransactionId":"%s"}' % ("%d" % index).rjust(MEMBER_ID_LENGTH, "7") for index in range(10_000))
    return ('{"members":[' + members + "],").encode()


MEMBERS_PREFIX = members_prefix()


def members_page(has_more, token):
    tail = b'"hasMore":true,"paginationToken":"%s"}' % token.encode() if has_more else b'"hasMore":false}'
    body = MEMBERS_PREFIX + tail
    assert len(body) <= MIB, len(body)
    return body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        split = urlsplit(self.path)
        query = parse_qs(split.query)
        identifier = split.path.rsplit("/", 1)[-1]
        token = query.get("paginationToken", [None])[0]
        page = int(token[1:]) if token and token.startswith("p") else 1
        if identifier == "max":
            self.send(200, GROUPS_MAX)
        elif identifier == "over":
            self.send(200, GROUPS_OVER)
        elif identifier == "hugelength":
            self.head(200, {"Content-Length": "1" + "0" * 23})
            self.wfile.write(b'{"groups":[')
            self.wfile.flush()
            self.hang()
        elif identifier == "endless":
            self.head(200, {"Connection": "close"})
            self.close_connection = True
            self.stream(lambda: b" " * 65536)
        elif identifier == "chunked":
            self.head(200, {"Transfer-Encoding": "chunked"})
            self.stream(lambda: b"10000\r\n" + b" " * 65536 + b"\r\n")
        elif identifier == "trickle":
            self.head(200, {"Content-Length": str(len(GROUPS_MAX))})
            for index in range(len(GROUPS_MAX)):
                try:
                    self.wfile.write(GROUPS_MAX[index : index + 1])
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(1)
        elif identifier == "silent":
            self.hang()
        elif identifier == "ratelimit":
            retry = int(time.time() * 1000) + 3_600_000
            self.send(429, b'{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}', {"Retry-After": str(retry)})
        elif identifier == "ratelimitsec":
            self.send(429, b'{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}', {"Retry-After": "3600"})
        elif identifier == "error500":
            self.send(500, b'{"errorCode":5000000,"errorMessage":"An unknown error occurred."}')
        elif identifier == "maxpages":
            self.send(200, members_page(page < 1000, "p%d" % (page + 1)))
        elif identifier == "overpages":
            self.send(200, members_page(True, "p%d" % (page + 1)))
        elif identifier == "failat500":
            if page >= 500:
                self.send(500, b'{"errorCode":5000000,"errorMessage":"An unknown error occurred."}')
            else:
                self.send(200, members_page(True, "p%d" % (page + 1)))
        elif identifier == "cycle":
            following = "B" if token == "A" else "A"
            self.send(200, b'{"members":[{"appTransactionId":"1"}],"hasMore":true,"paginationToken":"%s"}' % following.encode())
        else:
            self.send(404, b'{"errorCode":4040010,"errorMessage":"Transaction id not found."}')

    def head(self, status, headers):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()

    def send(self, status, body, headers=None):
        self.head(status, dict({"Content-Length": str(len(body))}, **(headers or {})))
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def stream(self, chunk):
        try:
            while True:
                self.wfile.write(chunk())
        except OSError:
            pass

    def hang(self):
        self.close_connection = True
        try:
            while self.connection.recv(4096):
                pass
        except OSError:
            pass


def exit_when_stdin_closes():
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
