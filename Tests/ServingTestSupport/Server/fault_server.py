#!/usr/bin/env python3
"""Servers that get TLS wrong on purpose, for AppStoreGroups' fault tests only.

Each binds 127.0.0.1 on a free port, prints `PORT <n>` on its first line of stdout, then one JSON
object per line for everything a client does to it. It exits when its standard input closes, so
it never outlives the test process that started it, and the test reads the events to the end.

    python3 fault_server.py plain   # speaks plain HTTP on the port a client reaches with https
    python3 fault_server.py tls     # speaks TLS with a self-signed certificate made at start

`plain` records the first bytes of every connection (base64) and answers them the way any plain
HTTP server answers a TLS ClientHello: 400 Bad Request. A client that fell back to plain HTTP
would show its request line and Authorization header in those bytes.

`tls` makes a fresh P-256 key and a self-signed certificate for 127.0.0.1 and localhost, valid
from yesterday to tomorrow, so the only thing wrong with it is that nobody trusts it. It records
each handshake's outcome, and any request bytes a client sends after a handshake that succeeded.
"""

import base64
import datetime
import ipaddress
import json
import os
import socket
import ssl
import sys
import tempfile
import threading

LOCK = threading.Lock()


def emit(event):
    with LOCK:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()


def read_some(connection, limit=65536, quiet=0.3):
    """The bytes a client sends before it goes quiet for `quiet` seconds (or closes)."""
    data = b""
    connection.settimeout(5)
    try:
        chunk = connection.recv(limit)
        data += chunk
        connection.settimeout(quiet)
        while chunk and len(data) < limit:
            chunk = connection.recv(limit - len(data))
            data += chunk
    except (socket.timeout, ssl.SSLError, OSError):
        pass
    return data


def serve_plain(connection):
    with connection:
        data = read_some(connection)
        emit({"event": "connection", "bytes": base64.b64encode(data).decode("ascii")})
        try:
            connection.sendall(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n"
                b"Connection: close\r\n\r\nBad Request\n"
            )
        except OSError:
            pass


def make_context():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # The ssl module loads a chain only from files.
    with tempfile.TemporaryDirectory(prefix="fault-server-") as directory:
        certificate_path = os.path.join(directory, "certificate.pem")
        key_path = os.path.join(directory, "key.pem")
        with open(certificate_path, "wb") as handle:
            handle.write(certificate.public_bytes(serialization.Encoding.PEM))
        with open(key_path, "wb") as handle:
            handle.write(
                key.private_bytes(
                    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
                )
            )
        context.load_cert_chain(certificate_path, key_path)
    return context


def serve_tls(connection, context):
    connection.settimeout(5)
    try:
        secure = context.wrap_socket(connection, server_side=True)
    except (ssl.SSLError, OSError) as error:
        emit({"event": "handshake-failed", "reason": str(error)})
        connection.close()
        return
    with secure:
        emit({"event": "handshake-ok"})
        data = read_some(secure)
        emit({"event": "request", "bytes": base64.b64encode(data).decode("ascii")})
        try:
            secure.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 14\r\nConnection: close\r\n\r\n{"groups": []}')
        except OSError:
            pass


def exit_when_stdin_closes():
    while sys.stdin.buffer.read(4096):
        pass
    with LOCK:
        sys.stdout.flush()
        os._exit(0)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("plain", "tls"):
        sys.exit("usage: fault_server.py plain|tls")
    mode = sys.argv[1]
    context = make_context() if mode == "tls" else None
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    with LOCK:
        sys.stdout.write("PORT %d\n" % listener.getsockname()[1])
        sys.stdout.flush()
    while True:
        connection, _ = listener.accept()
        if mode == "plain":
            target, arguments = serve_plain, (connection,)
        else:
            target, arguments = serve_tls, (connection, context)
        threading.Thread(target=target, args=arguments, daemon=True).start()


if __name__ == "__main__":
    main()
