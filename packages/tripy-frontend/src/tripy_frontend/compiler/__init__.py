"""Compiled mode: ``tp.compile`` traces a function (or ``tp.Module``) once into a shape-polymorphic
program and returns a ``tp.Executable`` that runs it for any input shapes within the declared
``tp.InputInfo`` bounds. Each submodule holds one concept and registers its public names."""
