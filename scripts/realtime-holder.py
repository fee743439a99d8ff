#!/usr/bin/env python3
"""Holds a device's realtime channel open, as a game does while it runs, for scripts that call the API with curl.

    scripts/realtime-holder.py URL TOKEN [BUNDLE_ID]

Opens `/v1/realtime` (a WebSocket) for the session TOKEN, prints "open" once upgraded, then reads and drops what the
server sends and answers nothing (the server's heartbeat check closes the channel after three silent beats, so a
heartbeat frame goes back every time one comes) until it is killed or the server closes the channel.
"""
import base64
import os
import socket
import sys
from urllib.parse import urlsplit


def frame(text):
    """A masked client text frame."""
    payload, mask = text.encode(), os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x81, 0x80 | len(payload)]) + mask + masked


def main(url, token, bundle_id="com.example.tapper"):
    address = urlsplit(url)
    connection = socket.create_connection((address.hostname, address.port))
    key = base64.b64encode(os.urandom(16)).decode()
    connection.sendall(
        (f"GET /v1/realtime HTTP/1.1\r\nHost: {address.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nX-GameCenter-Bundle-ID: {bundle_id}\r\n"
         f"X-GameCenter-Environment: sandbox\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = connection.recv(4096)
        if not chunk:
            sys.exit("the server closed the connection before the upgrade")
        answer += chunk
    if not answer.startswith(b"HTTP/1.1 101"):
        sys.exit(f"no upgrade: {answer.decode(errors='replace').splitlines()[0]}")
    print("open", flush=True)
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            return
        if b'"heartbeat"' in chunk:
            connection.sendall(frame('{"heartbeat":{}}'))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip())
    main(*sys.argv[1:])
