"""Tensor methods defined out of line: ``@TENSOR_METHOD_REGISTRY("__add__")`` on a function in an op's
file makes it a method of ``tripy.Tensor``. The registry is read when the package finishes importing."""

from __future__ import annotations

from typing import Any, Callable, Dict, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _MethodRegistry:
    def __init__(self) -> None:
        self.methods: Dict[str, Callable[..., Any]] = {}

    def __call__(self, name: str) -> Callable[[F], F]:
        def register(func: F) -> F:
            assert name not in self.methods, f"Tensor method '{name}' registered twice"
            self.methods[name] = func
            func.__tripy_method_name__ = name  # type: ignore[attr-defined]
            return func

        return register


TENSOR_METHOD_REGISTRY = _MethodRegistry()
