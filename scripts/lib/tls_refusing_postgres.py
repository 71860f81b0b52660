#!/usr/bin/env python3
"""A network attacker in front of a PostgreSQL server, for the fleet sample's test: it refuses the
client's SSLRequest ('N', as a server without TLS answers), asks for the password in clear text
(AuthenticationCleartextPassword, protocol 3.0) and writes whatever password arrives to a file.

Usage: tls_refusing_postgres.py HOST RECORD_FILE  -- prints the port it listens on (on stderr), then serves
until killed. Written from the PostgreSQL documentation ("Message Flow", "Message Formats").
"""
import socket
import struct
import sys
import threading


def read_exactly(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def serve(connection, record):
    try:
        with connection:
            while True:
                length, code = struct.unpack("!ii", read_exactly(connection, 8))
                if length == 8 and code in (80877103, 80877104):  # SSLRequest, GSSENCRequest
                    connection.sendall(b"N")
                    continue
                read_exactly(connection, length - 8)  # the rest of the StartupMessage
                break
            connection.sendall(b"R" + struct.pack("!ii", 8, 3))  # AuthenticationCleartextPassword
            kind = read_exactly(connection, 1)
            length = struct.unpack("!i", read_exactly(connection, 4))[0]
            body = read_exactly(connection, length - 4)
            if kind == b"p":
                with open(record, "ab") as out:
                    out.write(body.rstrip(b"\0") + b"\n")
    except (EOFError, OSError):
        pass


def main():
    host, record = sys.argv[1], sys.argv[2]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server = socket.socket(family, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, 0))
    server.listen(16)
    print(server.getsockname()[1], file=sys.stderr, flush=True)
    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve, args=(connection, record), daemon=True).start()


if __name__ == "__main__":
    main()
