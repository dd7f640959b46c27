"""``python -m tripy_serve MODEL.tpexe ...``: the same as ``tripy serve MODEL.tpexe ...``."""

from tripy_serve.cli import main

main()
