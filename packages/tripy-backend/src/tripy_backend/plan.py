"""What the frontend asks the backend before it builds a program: at which level to compile eager programs, in which
layout to hand convolution kernels, and which weights ``tp.compile`` should evaluate once instead of leaving their
transpose or widening in the program. The answers are the compiler's rules (``cpu_plan`` for XLA:CPU); the frontend
only asks, so the rules live in one place and the backend's passes and the frontend never disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tripy_backend import cpu_plan
from tripy_backend.cpu_plan import Product

# Eager programs compile one level below tp.compile's default: an eager program usually runs a few times, so its
# compile matters more than its last percent of speed (LLVM -O2 on XLA:CPU: ~30% faster compiles, as fast to run).
EAGER_OPTIMIZATION_LEVEL = 2

__all__ = ["EAGER_OPTIMIZATION_LEVEL", "Product", "WeightPlan", "convolution_kernel_last", "weights"]


def convolution_kernel_last() -> bool:
    """Whether convolutions take their kernels as ``[*kernel, C / groups, O]`` (the layout XLA's convolutions
    read) rather than ``[O, C / groups, *kernel]``: ``tp.compile`` then transposes each baked-in kernel once
    instead of on every call (ResNet-18: 20 kernels)."""
    return True


@dataclass(frozen=True)
class WeightPlan:
    """How a program with given matrix products and convolutions reads its weights (see ``weights``)."""

    runtime: str  # the XLA:CPU runtime the program will compile for

    def keeps_transposed(self, rows: int, weight_elements: int) -> bool:
        """Whether ``x @ W^T`` with `rows` rows of ``x`` (-1: not static) reads the ``[out, in]`` weight as stored,
        instead of an ``[in, out]`` copy evaluated once (rows not static: the backend decides for each bucket of the
        range, and makes the copies its small buckets read itself)."""
        return cpu_plan.keeps_transposed_weight(rows, weight_elements, self.runtime)

    def widens_in_loop(self, rows: int, weight_elements: int) -> bool:
        """Whether a product with `rows` rows reads a narrow stored weight and widens it in its own loop, instead
        of a float copy evaluated once."""
        return cpu_plan.widens_weight_in_loop(rows, weight_elements, self.runtime)


def weights(products: Sequence[Product], convolution_kernel_elements: int = 0) -> WeightPlan:
    """The weight plan of a program with these matrix products and convolution kernels (elements in all)."""
    return WeightPlan(cpu_plan.runtime(products, convolution_kernel_elements))
