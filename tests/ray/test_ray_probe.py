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


def test_a_tls_cluster_is_only_connected_to(monkeypatch):
    """With RAY_USE_TLS the head answers a TLS hello, not an HTTP/2 greeting: the probe stops at the connection."""
    monkeypatch.setenv("RAY_USE_TLS", "1")
    port, stop = _server(lambda conn: None)
    try:
        _reachable(f"127.0.0.1:{port}", timeout=0.5)
    finally:
        stop()


@pytest.mark.ray
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (requirements-ray.txt)")
def test_a_real_ray_head_answers_the_probe(tmp_path):
    """The oracle: a local Ray instance's GCS address (what ``--ray-address host:port`` names) passes the probe.
    In a child process, so its Ray instance is its own and is shut down with it."""
    import subprocess
    import sys
    from pathlib import Path

    script = ("import ray\n"
              "ctx = ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)\n"
              "from ragdiag.index.ray_engine import _reachable\n"
              "_reachable(ctx.address_info['gcs_address'], timeout=10)\n"
              "print('probe ok')\n"
              "ray.shutdown()\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0 and "probe ok" in proc.stdout, proc.stderr[-2000:]
