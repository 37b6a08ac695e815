#!/usr/bin/env python3
"""A fake App Store Server API for the groups endpoints, for AppStoreGroups' tests only.

It binds 127.0.0.1 on a free port and prints `PORT <n>` on its first line of stdout. It checks
every request's JWT on its own, with the `cryptography` package (ES256 over the raw R||S
signature against the test public key; header and claims as Apple documents them), and answers
401 without a body when the token is wrong. It exits when its standard input closes, so it never
outlives the test process that started it.

One server serves many tests at once: each test puts its own namespace in front of Apple's
paths (`/t/<namespace>/groups/v1/...`, the way a client reaches Apple through a proxy's path
prefix), and gets its own request log (GET /__log/<namespace>, itself not logged) and its own
per-id counters. Logged paths are Apple's, without the prefix.

The answer is chosen by the id in the path: the id's first `_`-separated word names a scenario,
the rest are its arguments (ids are [A-Za-z0-9_-], so that is all the room there is).

    python3 fake_app_store.py serve  --public-key PEM --key-id K --issuer-id I --bundle-id B
    python3 fake_app_store.py verify --public-key PEM --key-id K --issuer-id I --bundle-id B < token
"""

import argparse
import base64
import json
import os
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")
CUSTOMER_GROUPS_PREFIX = "/groups/v1/currentGroups/"
GROUP_MEMBERS_PREFIX = "/groups/v1/group/"

CUSTOMER_GROUPS_OK = {
    "groups": [
        {
            "groupId": "900000000000000000",
            "groupType": "ORGANIZATION",
            "roles": [
                {"productId": "example.productId.one", "role": "ADMIN"},
                {"productId": "example.productId.two", "role": "NONE"},
            ],
        }
    ]
}

GROUP_MEMBERS_OK = {
    "members": [{"appTransactionId": "700000000000000001"}, {"appTransactionId": "700000000000000002"}],
    "hasMore": False,
}

# Three pages. The last token holds characters that must be percent-encoded in a query.
PAGES = {
    None: ({"members": [{"appTransactionId": "a1"}, {"appTransactionId": "a2"}], "hasMore": True}, "page2-token"),
    "page2-token": ({"members": [{"appTransactionId": "a3"}, {"appTransactionId": "a4"}], "hasMore": True}, "page3/token+=&x"),
    "page3/token+=&x": ({"members": [{"appTransactionId": "a5"}], "hasMore": False}, None),
}

ERRORS = {
    "invalidTransactionId": (400, 4000006, "Invalid transaction id."),
    "invalidGroupId": (400, 4000225, "Invalid group id."),
    "invalidLimit": (400, 4000004, "Invalid limit."),
    "invalidPaginationToken": (400, 4000014, "Invalid pagination token."),
    "paginationTokenExpired": (400, 4000017, "Pagination token expired."),
    "transactionIdNotFound": (404, 4040010, "Transaction id not found."),
    "groupNotFound": (404, 4040022, "Group not found."),
    "rateLimitExceeded": (429, 4290000, "Rate limit exceeded."),
    "generalInternal": (500, 5000000, "An unknown error occurred."),
    "generalInternalRetryable": (500, 5000001, "An unknown error occurred. Please try again."),
    "unknownCode": (400, 4000999, "A code this client has never heard of."),
}


def b64url_decode(text):
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        raise ValueError("not base64url without padding")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_token(token, public_key, key_id, issuer_id, bundle_id, now):
    """Returns None when the token is right, else why it is not."""
    parts = token.split(".")
    if len(parts) != 3:
        return "not three dot-separated parts"
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except ValueError as error:
        return "undecodable: %s" % error
    if header != {"alg": "ES256", "kid": key_id, "typ": "JWT"}:
        return "wrong header %r" % header
    if len(signature) != 64:
        return "signature is %d bytes, not 64 (R||S)" % len(signature)
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    try:
        public_key.verify(
            encode_dss_signature(r, s), (parts[0] + "." + parts[1]).encode("ascii"), ec.ECDSA(hashes.SHA256())
        )
    except InvalidSignature:
        return "bad signature"
    if not isinstance(claims, dict) or set(claims) != {"iss", "iat", "exp", "aud", "bid"}:
        return "wrong claim names %r" % claims
    if claims["iss"] != issuer_id:
        return "wrong iss"
    if claims["aud"] != "appstoreconnect-v1":
        return "wrong aud"
    if claims["bid"] != bundle_id:
        return "wrong bid"
    iat, exp = claims["iat"], claims["exp"]
    if type(iat) is not int or type(exp) is not int:
        return "iat and exp must be integers"
    if exp - iat != 300:
        return "exp - iat is %d, not 300" % (exp - iat)
    # As Apple: a token is good until it expires, however long ago it was made (a client may reuse
    # it, and a busy machine may send it late); one made more than a minute ahead is refused.
    if iat - now > 60:
        return "iat is %d s in the future" % (iat - now)
    if now >= exp:
        return "the token expired %d s ago" % (now - exp)
    return None


class State:
    def __init__(self, args):
        self.args = args
        with open(args.public_key, "rb") as handle:
            self.public_key = serialization.load_pem_public_key(handle.read())
        self.lock = threading.Lock()
        self.log = []
        self.counts = {}
        self.page_limits = {}

    def record(self, entry):
        with self.lock:
            self.log.append(entry)

    def count(self, key):
        """How many requests for `key` came before this one."""
        with self.lock:
            seen = self.counts.get(key, 0)
            self.counts[key] = seen + 1
            return seen


class Handler(BaseHTTPRequestHandler):
    server_version = "FakeAppStore/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        state = self.server.state
        split = urlsplit(self.path)
        if split.path.startswith("/__log/"):
            namespace = split.path[len("/__log/"):]
            with state.lock:
                self.send_json(200, [entry for entry in state.log if entry["namespace"] == namespace])
            return
        namespace = ""
        path = split.path
        raw_path = self.path
        if path.startswith("/t/"):
            namespace, _, rest = path[len("/t/"):].partition("/")
            path = "/" + rest
            raw_path = self.path[len("/t/") + len(namespace):]
        query = parse_qs(split.query, keep_blank_values=True)
        authorization = self.headers.get("Authorization", "")
        token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        problem = "no bearer token" if token is None else verify_token(
            token, state.public_key, state.args.key_id, state.args.issuer_id, state.args.bundle_id, int(time.time())
        )
        state.record({
            "namespace": namespace,
            "path": raw_path,
            "query": query,
            "timeMs": int(time.time() * 1000),
            "token": token,
            "authorization": problem or "ok",
            "host": self.headers.get("Host"),
        })
        if problem is not None:
            self.send_empty(401)
            return
        if path.startswith(CUSTOMER_GROUPS_PREFIX):
            self.answer(namespace, "groups", path[len(CUSTOMER_GROUPS_PREFIX):], query)
        elif path.startswith(GROUP_MEMBERS_PREFIX):
            self.answer(namespace, "members", path[len(GROUP_MEMBERS_PREFIX):], query)
        else:
            self.send_json(404, {"errorCode": 4040000, "errorMessage": "No such path on the fake server."})

    def answer(self, namespace, endpoint, identifier, query):
        state = self.server.state
        if not ID_PATTERN.fullmatch(identifier):
            # The client must never send these; answer like a confused server would.
            self.send_json(400, {"errorCode": 4000006, "errorMessage": "Invalid id reached the server."})
            return
        if endpoint == "groups" and query:
            self.send_json(400, {"errorCode": 4000000, "errorMessage": "Get Customer Groups takes no query."})
            return
        words = identifier.split("_")
        scenario, arguments = words[0], words[1:]
        seen = state.count((namespace, endpoint, identifier))
        ok = CUSTOMER_GROUPS_OK if endpoint == "groups" else GROUP_MEMBERS_OK

        if scenario in ERRORS:
            self.send_error_body(*ERRORS[scenario])
        elif scenario == "unauthorized":
            self.send_empty(401)
        elif scenario == "ratelimit":
            # ratelimit_<retryAfterMs>[_<times>]: 429 with that Retry-After `times` times (default
            # always), then 200.
            times = int(arguments[1]) if len(arguments) > 1 else None
            if times is None or seen < times:
                self.send_error_body(*ERRORS["rateLimitExceeded"], headers={"Retry-After": arguments[0]})
            else:
                self.send_json(200, ok)
        elif scenario == "ratelimitraw":
            # ratelimitraw_<header|none>_<times>: a Retry-After that is missing or not a UNIX time
            # in milliseconds (the header value is the argument verbatim), `times` times, then 200.
            times = int(arguments[1])
            if seen < times:
                headers = {} if arguments[0] == "none" else {"Retry-After": arguments[0]}
                self.send_error_body(*ERRORS["rateLimitExceeded"], headers=headers)
            else:
                self.send_json(200, ok)
        elif scenario == "ratelimitin":
            # ratelimitin_<ms>: 429 every time, with a Retry-After `ms` after the moment it is sent.
            retry_after = int(time.time() * 1000) + int(arguments[0])
            self.send_error_body(*ERRORS["rateLimitExceeded"], headers={"Retry-After": str(retry_after)})
        elif scenario == "ratelimitstep":
            # ratelimitstep_<startMs>_<stepMs>: 429 every time; the n-th answer (from 1) names the
            # instant start + n * step, so a client whose clock moves only by its own waits is
            # told to wait exactly `step` each time, however slow the machine.
            retry_after = int(arguments[0]) + (seen + 1) * int(arguments[1])
            self.send_error_body(*ERRORS["rateLimitExceeded"], headers={"Retry-After": str(retry_after)})
        elif scenario == "ratelimithex":
            # ratelimithex_<hex>[_<times>]: 429 with the Retry-After value whose UTF-8 bytes are
            # <hex> (ids cannot hold dots, spaces or commas), `times` times (default always), then 200.
            times = int(arguments[1]) if len(arguments) > 1 else None
            if times is None or seen < times:
                value = bytes.fromhex(arguments[0]).decode("utf-8")
                self.send_error_body(*ERRORS["rateLimitExceeded"], headers={"Retry-After": value})
            else:
                self.send_json(200, ok)
        elif scenario == "reset":
            # reset_<bytes>: 200 promising 4096 bytes, `bytes` of them, then a TCP reset (RST, not
            # FIN: SO_LINGER 0) in the middle of the body.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "4096")
            self.end_headers()
            self.wfile.write((json.dumps(ok).encode() + b" " * 4096)[: int(arguments[0])])
            self.wfile.flush()
            time.sleep(0.2)  # let the client read the headers and the first bytes
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif scenario == "trickle":
            # trickle_<intervalMs>_<bytes>: slow loris. Headers at once, then a body of `bytes` bytes
            # one byte every `intervalMs`: never idle for long, yet the whole answer takes
            # bytes * interval. Stops when the client hangs up.
            body = (json.dumps(ok).encode() + b" " * int(arguments[1]))[: max(int(arguments[1]), 1)]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.flush()
                for index in range(len(body)):
                    time.sleep(int(arguments[0]) / 1000)
                    self.wfile.write(body[index : index + 1])
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif scenario == "flaky":
            # flaky_<errorName>_<times>: that error `times` times, then 200.
            if seen < int(arguments[1]):
                self.send_error_body(*ERRORS[arguments[0]])
            else:
                self.send_json(200, ok)
        elif scenario == "html":
            # html_<status>: an error page that is not Apple's error body.
            self.send_bytes(int(arguments[0]), b"<html><body>Bad Gateway</body></html>", "text/html")
        elif scenario == "nobody":
            self.send_empty(int(arguments[0]))
        elif scenario == "slow":
            time.sleep(int(arguments[0]) / 1000)
            self.send_json(200, ok)
        elif scenario == "oversized":
            # 200 with a body over 1 MiB, announced by Content-Length.
            self.send_bytes(200, json.dumps(ok).encode() + b" " * (1 << 20), "application/json")
        elif scenario == "oversizedclose":
            # 200 with a body over 1 MiB and no Content-Length: it ends when the connection closes.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(json.dumps(ok).encode())
                for _ in range(20):
                    self.wfile.write(b" " * (1 << 16))
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif scenario == "endlesschunked":
            # 200 with a chunked body that never ends, sent as fast as the client takes it.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.close_connection = True
            chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
            try:
                while True:
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif scenario == "hugelength":
            # 200 announcing a body of 10^23 bytes: more than any integer type the client may parse
            # it into. A few bytes follow, then the connection stays open until the client leaves.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1" + "0" * 23)
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(b'{"groups": [')
                self.wfile.flush()
                time.sleep(5)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif scenario == "truncated":
            # Content-Length promises more than is sent, then the connection closes.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b'{"groups": [')
            self.wfile.flush()
            self.close_connection = True
        elif scenario == "malformed":
            body = {"groups": [{"groupType": "ORGANIZATION"}]} if endpoint == "groups" else {"members": [{"appTransactionId": 7}], "hasMore": False}
            self.send_json(200, body)
        elif scenario == "notjson":
            self.send_bytes(200, b"this is not JSON", "text/plain")
        elif scenario == "redirect":
            # Points at the same server under another host name: a client that followed it with
            # the Authorization header would show up in the log.
            port = self.server.server_address[1]
            self.send_response(302)
            self.send_header("Location", "http://localhost:%d/t/%s/groups/v1/currentGroups/ok" % (port, namespace))
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif scenario == "ingroup" and endpoint == "groups":
            # ingroup_<groupId>: the customer administers that group (its id may hold underscores,
            # so `ingroup_paged_team` is group `paged_team`) for the sandbox placeholder product.
            group_id = "_".join(arguments)
            self.send_json(200, {"groups": [{"groupId": group_id, "groupType": "ORGANIZATION",
                                             "roles": [{"productId": "example.productId.one", "role": "ADMIN"}]}]})
        elif scenario == "unusualgroup" and endpoint == "groups":
            # unusualgroup_<n>: the customer administers a group whose id holds characters no
            # transaction id may (Apple documents a group id as a string and no more).
            self.send_json(200, {"groups": [{"groupId": "team:42/\u00e9 *", "groupType": "ORGANIZATION",
                                             "roles": [{"productId": "example.productId.one", "role": "ADMIN"}]}]})
        elif scenario == "placeholder" and endpoint == "members":
            self.send_json(200, {"members": [{"appTransactionId": "700000000000000000"}], "hasMore": False})
        elif scenario == "empty":
            self.send_json(200, {"groups": []} if endpoint == "groups" else {"members": [], "hasMore": False})
        elif scenario == "paged" and endpoint == "members":
            self.answer_page((namespace, identifier), query, PAGES)
        elif scenario == "expiring" and endpoint == "members":
            pages = {None: PAGES[None]}
            if query.get("paginationToken") == ["page2-token"]:
                self.send_error_body(*ERRORS["paginationTokenExpired"])
            else:
                self.answer_page((namespace, identifier), query, pages)
        elif scenario == "tokenless" and endpoint == "members":
            self.send_json(200, {"members": [{"appTransactionId": "a1"}], "hasMore": True})
        elif scenario == "loop" and endpoint == "members":
            self.send_json(200, {"members": [{"appTransactionId": "a1"}], "hasMore": True, "paginationToken": "same"})
        elif scenario == "cycle" and endpoint == "members":
            # A pagination cycle longer than one token: no token -> A, A -> B, B -> A, ...
            token = query.get("paginationToken", [None])[0]
            next_token = "token-b" if token == "token-a" else "token-a"
            member = {"appTransactionId": "c-%s" % (token or "first")}
            self.send_json(200, {"members": [member], "hasMore": True, "paginationToken": next_token})
        elif scenario == "big" and endpoint == "groups":
            # big_<n>[_<tag>]: n organization groups, each with one role; the tag only makes the id
            # (and so the cache key) distinct.
            groups = [{"groupId": "g%05d" % index, "groupType": "ORGANIZATION",
                       "roles": [{"productId": "example.productId.one", "role": "ADMIN"}]}
                      for index in range(int(arguments[0]))]
            self.send_json(200, {"groups": groups})
        elif scenario == "injected":
            # An error answer whose errorMessage carries a newline, a CI annotation and ESC.
            self.send_error_body(400, 4000006, "Invalid id.\n::error file=x.swift::forged\u001b[2J")
        else:
            self.send_json(200, ok)

    def answer_page(self, key, query, pages):
        state = self.server.state
        limit = query.get("limit", [None])[0]
        with state.lock:
            first = state.page_limits.setdefault(key, limit)
        if limit != first:
            self.send_error_body(*ERRORS["invalidLimit"])
            return
        token = query.get("paginationToken", [None])[0]
        if token not in pages:
            self.send_error_body(*ERRORS["invalidPaginationToken"])
            return
        body, next_token = pages[token]
        body = dict(body)
        if next_token is not None:
            body["paginationToken"] = next_token
        self.send_json(200, body)

    def send_error_body(self, status, code, message, headers=None):
        self.send_json(status, {"errorCode": code, "errorMessage": message}, headers)

    def send_json(self, status, value, headers=None):
        self.send_bytes(status, json.dumps(value).encode(), "application/json", headers)

    def send_bytes(self, status, body, content_type, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def send_empty(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


def exit_when_stdin_closes():
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["serve", "verify"])
    parser.add_argument("--public-key", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--issuer-id", required=True)
    parser.add_argument("--bundle-id", required=True)
    args = parser.parse_args()
    if args.mode == "verify":
        with open(args.public_key, "rb") as handle:
            public_key = serialization.load_pem_public_key(handle.read())
        token = sys.stdin.read().strip()
        problem = verify_token(token, public_key, args.key_id, args.issuer_id, args.bundle_id, int(time.time()))
        print("verified" if problem is None else "rejected: " + problem)
        sys.exit(0 if problem is None else 1)
    # A backlog for bursts of connections (the default of 5 drops SYNs under load: a second lost).
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.state = State(args)
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
