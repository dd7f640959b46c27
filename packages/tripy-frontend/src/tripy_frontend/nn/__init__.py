"""Modules and layers: ``tp.Module``, ``tp.Sequential``, ``tp.Linear``, ``tp.LayerNorm``, ...

One layer per file. The frontend package imports every submodule, so each ``@public_api()``
registration here becomes ``tripy.<Name>``.
"""
