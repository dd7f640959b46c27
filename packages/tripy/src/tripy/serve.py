"""``tripy serve`` and ``python -m tripy.serve``: serve saved executables over HTTP (implemented in
``tripy_frontend.serve``; needs ``pip install 'tripy-inference[serve]'``)."""

from tripy_frontend.serve.cli import command, main

__all__ = ["command", "main"]

if __name__ == "__main__":
    main()
