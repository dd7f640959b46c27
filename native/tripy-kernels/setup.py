"""Builds tripy-kernels' native module against the XLA FFI header of the jaxlib installed (``jax.ffi.include_dir()``)
and oneDNN's headers and library as the ``onednn-devel`` and ``onednn`` wheels install them (``<prefix>/include``,
``<prefix>/lib``). The module finds libdnnl beside it at run time through a relative search path: site-packages'
``tripy_kernels/`` is three levels below ``<prefix>/lib``."""

import os
import sys
import sysconfig

from setuptools import Extension, setup


def ffi_include_dir() -> str:
    try:
        import jax.ffi as ffi  # jax >= 0.4.38
    except ImportError:
        import jax.extend.ffi as ffi  # type: ignore[no-redef]
    return ffi.include_dir()


def onednn_prefix() -> str:
    """The prefix whose include/ has oneDNN's headers (`ONEDNN_PREFIX`, or this Python's)."""
    for prefix in [os.environ.get("ONEDNN_PREFIX", ""), sys.prefix, sysconfig.get_config_var("prefix") or ""]:
        if prefix and os.path.exists(os.path.join(prefix, "include", "oneapi", "dnnl", "dnnl.hpp")):
            return prefix
    raise SystemExit("tripy-kernels: oneDNN's headers not found: pip install onednn onednn-devel")


prefix = onednn_prefix()
setup(
    ext_modules=[
        Extension(
            "tripy_kernels._native",
            sources=["csrc/convolution.cc"],
            include_dirs=[ffi_include_dir(), os.path.join(prefix, "include")],
            library_dirs=[os.path.join(prefix, "lib")],
            libraries=["dnnl"],
            extra_compile_args=["-std=c++17", "-O2", "-fvisibility=hidden", "-fopenmp"],
            extra_link_args=["-fopenmp", "-Wl,-rpath,$ORIGIN/../../..", "-Wl,--disable-new-dtags"],
            language="c++",
        )
    ]
)
