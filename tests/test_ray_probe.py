"""The Ray address probe: a port that accepts connections but never answers is refused within the timeout
(a read timeout, not only a connect timeout); a gRPC server, as Ray's head is, passes. No Ray needed."""

from __future__ import annotations

import importlib.util
import socket
import threading
import time

import pytest

from ragdiag.index.ray_engine import RayUnavailable, _reachable


def _server(handler):
    """A local TCP server on a free port running ``handler(conn)`` per connection; returns (port, stop)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    conns = []

    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conns.append(conn)
            threading.Thread(target=handler, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()

    def stop():
        sock.close()
        for c in conns:
            c.close()
    return sock.getsockname()[1], stop


def test_a_port_that_accepts_but_never_answers_is_refused_within_the_timeout():
    port, stop = _server(lambda conn: None)  # accepts, reads nothing, says nothing
    try:
        t = time.monotonic()
        with pytest.raises(RayUnavailable, match="accepts connections but did not answer within 0.5 s"):
            _reachable(f"127.0.0.1:{port}", timeout=0.5)
        assert time.monotonic() - t < 5
    finally:
        stop()


def test_a_port_that_closes_at_once_is_refused():
    port, stop = _server(lambda conn: conn.close())
    try:
        with pytest.raises(RayUnavailable, match="closed the connection without answering|Connection reset"):
            _reachable(f"ray://127.0.0.1:{port}", timeout=2)
    finally:
        stop()


def test_a_refused_port_fails_fast():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(RayUnavailable, match="cannot reach Ray"):
        _reachable(f"127.0.0.1:{port}", timeout=2)


@pytest.mark.skipif(importlib.util.find_spec("grpc") is None, reason="grpcio is not installed")
def test_a_grpc_server_answers_the_probe():
    """The oracle: a real gRPC server (grpcio, what Ray's head runs) answers the HTTP/2 greeting."""
    from concurrent import futures

    import grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        _reachable(f"127.0.0.1:{port}", timeout=5)
        _reachable(f"ray://127.0.0.1:{port}", timeout=5)
    finally:
        server.stop(0)
