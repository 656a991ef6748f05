"""Subcommand ``dashboard``: serve the Streamlit app from wherever ragdiag is installed.

``ragdiag dashboard [--corpus DIR] ...`` is ``./run.sh dashboard`` without the
checkout: it finds the app (the repository's ``app.py``, or the copy an
installed wheel carries in ``ragdiag_bundle``, :mod:`ragdiag.core.bundle`) and
starts ``python -m ui.serve`` there (the configured data's evaluation starts with
the server), with the app's ``.streamlit/config.toml`` given as command-line
settings, so it applies from any folder. The options become the ``RAGDIAG_*``
variables the app reads (``app.py``'s docstring lists them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .common import UsageError
from .options import add_inputs, add_store

__all__ = ["register", "cmd_dashboard", "streamlit_flags", "dashboard_command"]

INSTALL_HINT = "the dashboard needs streamlit and altair: pip install 'ragdiag[dashboard]'"


def register(sub) -> None:
    """Add ``dashboard`` to the subparsers ``sub``."""
    p = sub.add_parser("dashboard", help="serve the dashboard (Streamlit) on this machine",
                       description="Serve the dashboard: the configured data is evaluated as the server starts; "
                                   "open the address it prints. Needs the dashboard extra "
                                   "(pip install 'ragdiag[dashboard]').")
    add_inputs(p)
    p.add_argument("--roots", help="further folders visitors may open, separated by the path separator (:)")
    p.add_argument("--locked", action="store_true", help="no path fields at all: visitors see the configured data")
    p.add_argument("--no-warm", action="store_true", help="do not start the evaluation before the first visit")
    p.add_argument("--baseline", help="what you run now, e.g. E/hybrid (the pages compare with it)")
    p.add_argument("--history", metavar="FILE", help="the run history the History page draws (ragdiag history)")
    p.add_argument("--monitor-log", metavar="FILE", help="the query log the Monitor page watches (ragdiag monitor)")
    add_store(p, no_cache=False)
    p.add_argument("--address", default=None, help="address to serve on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=None, help="port (default 8501)")
    p.set_defaults(func=cmd_dashboard)


def streamlit_flags(config: Path) -> list[str]:
    """A Streamlit ``config.toml`` as ``--section.option=value`` flags (what ``streamlit run`` accepts).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "config.toml"
    >>> _ = path.write_text('[server]\\nheadless = true\\nmaxUploadSize = 20\\n[theme.light]\\nprimaryColor = "#37474f"\\n')
    >>> streamlit_flags(path)
    ['--server.headless=true', '--server.maxUploadSize=20', '--theme.light.primaryColor=#37474f']
    """
    import tomllib

    flags = []

    def walk(prefix: str, options: dict) -> None:  # nested tables ([theme.light]) are dotted option names
        for name, value in options.items():
            if isinstance(value, dict):
                walk(f"{prefix}.{name}", value)
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags.append(f"--{prefix}.{name}={text}")

    for section, options in tomllib.loads(config.read_text(encoding="utf-8")).items():
        walk(section, options)
    return flags


def dashboard_command(args, root: Path) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that serve the app in ``root`` with the options ``args``."""
    env = dict(os.environ)
    for option, var in (("corpus", "RAGDIAG_CORPUS"), ("truth", "RAGDIAG_TRUTH"), ("roots", "RAGDIAG_ROOTS"),
                        ("baseline", "RAGDIAG_BASELINE"), ("history", "RAGDIAG_HISTORY"),
                        ("cache", "RAGDIAG_CACHE"), ("monitor_log", "RAGDIAG_MONITOR_LOG")):
        value = getattr(args, option, None)
        if value:
            files = ("corpus", "truth", "history", "cache", "monitor_log")
            env[var] = str(Path(value).resolve()) if option in files else value
    if args.locked:
        env["RAGDIAG_LOCKED"] = "1"
    if args.no_warm:
        env["RAGDIAG_WARM"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    config = root / ".streamlit" / "config.toml"
    flags = streamlit_flags(config) if config.is_file() else []
    if args.address:
        flags.append(f"--server.address={args.address}")
    if args.port is not None:
        flags.append(f"--server.port={args.port}")
    return [sys.executable, "-m", "ui.serve", *flags], env


def cmd_dashboard(args) -> int:
    """``dashboard``: run the server until it stops (Ctrl+C), return its exit status."""
    import importlib.util

    from ..core.bundle import bundle_root

    if args.port is not None and not 1 <= args.port <= 65535:
        raise UsageError(f"--port must be between 1 and 65535, got {args.port}")
    for option in ("corpus", "truth"):
        value = getattr(args, option)
        if value and not Path(value).exists():
            raise UsageError(f"--{option} {value!r} does not exist")
    for module in ("streamlit", "altair"):
        if importlib.util.find_spec(module) is None:
            raise UsageError(INSTALL_HINT)
    root = bundle_root()
    if not (root / "app.py").is_file():
        raise UsageError(f"the dashboard's files are not installed ({root / 'app.py'} is missing): reinstall "
                         "ragdiag from its wheel, or run ./run.sh dashboard in a checkout")
    command, env = dashboard_command(args, root)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":  # the server replaces this process: a stop signal reaches it, no server is orphaned
        os.execve(command[0], command, env)
    proc = subprocess.Popen(command, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        return 130
