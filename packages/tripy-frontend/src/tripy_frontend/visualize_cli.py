"""``tripy visualize MODEL.tpexe [--port 8080] [--no-browser] [--save-to DIR]``: a saved executable's StableHLO in
Model Explorer (``tp.visualize``)."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from tripy_flatir.exceptions import TripyException
from tripy_frontend.compiler.executable import Executable
from tripy_frontend.visualize import visualize


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tripy visualize",
        description="Show a saved executable's StableHLO as a graph "
        "in Model Explorer (pip install 'tripy-inference[visualize]').",
    )
    p.add_argument("model", help="a saved executable (tp.Executable.save)")
    p.add_argument("--host", default="localhost", help="where Model Explorer's server listens (default: localhost)")
    p.add_argument("--port", type=int, default=8080, help="its port (default: 8080)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser (e.g. on a remote machine)")
    p.add_argument("--save-to", default=None, help="only write the graph into this folder (needs no extra)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = parser().parse_args(argv)
    try:
        exe = Executable.load(args.model)
        folder = visualize(exe, save_to=args.save_to, host=args.host, port=args.port, open_browser=not args.no_browser)
    except TripyException as e:  # (its report points at this file's line: the message alone is what helps)
        text = str(e)
        sys.exit(f"tripy visualize: {text.split(chr(10) * 2, 1)[-1] if text.startswith('-->') else text}")
    except OSError as e:
        sys.exit(f"tripy visualize: cannot read '{args.model}': {e.strerror or e}.")
    print(f"tripy visualize: the graph is in {folder}")
