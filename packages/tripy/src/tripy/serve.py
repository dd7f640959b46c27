"""The ``tripy`` console script (``tripy serve ...``, ``tripy visualize ...``, ``tripy --version``) and
``python -m tripy.serve``.

Serving is its own distribution above this one, ``tripy-serve`` (``pip install 'tripy-inference[serve]'``). Its
entry point is looked up by name when ``serve`` is asked for (``importlib``, not an import statement: the
layering contract keeps this package from importing the layers above it), and a missing install is one line
that says what to install.
"""

import importlib
import sys
from importlib import metadata
from typing import List, Optional, Sequence

from tripy_frontend import visualize_cli

__all__ = ["command", "main"]

INSTALL_HINT = "tripy serve needs the 'serve' extra: pip install 'tripy-inference[serve]'"

USAGE = """usage: tripy [--version] [--help] COMMAND [ARGS ...]

commands:
  serve      serve saved executables over HTTP (tripy serve MODEL.tpexe --port 8000; tripy serve --help)
  visualize  show a saved executable's graph in Model Explorer (tripy visualize MODEL.tpexe --no-browser)"""


def main(argv: Optional[Sequence[str]] = None) -> None:
    """``tripy serve ARGS``: hand `argv` to ``tripy_serve.cli.main``, or say how to install it."""
    try:
        cli = importlib.import_module("tripy_serve.cli")
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in ("tripy_serve", "starlette", "uvicorn"):
            raise
        sys.exit(f"{INSTALL_HINT} ({e})")
    cli.main(argv)


def _version() -> str:
    try:
        return f"tripy-inference {metadata.version('tripy-inference')}"
    except metadata.PackageNotFoundError:
        return "tripy (version unknown)"


def command(argv: Optional[List[str]] = None) -> None:
    """The ``tripy`` console script: ``tripy serve ...``, ``tripy visualize ...``, ``--version``, ``--help``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--version"], ["-V"]):
        print(_version())
    elif argv[:1] in (["--help"], ["-h"], ["help"]):
        print(USAGE)
    elif not argv:
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    elif argv[0] == "serve":
        main(argv[1:])
    elif argv[0] == "visualize":
        visualize_cli.main(argv[1:])
    else:
        sys.exit(f"tripy: unknown command '{argv[0]}' (the commands are: serve, visualize; see tripy --help)")


if __name__ == "__main__":
    main()
