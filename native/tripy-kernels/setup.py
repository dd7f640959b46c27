"""Builds tripy-kernels' native module against the XLA FFI header of the jaxlib installed (``jax.ffi.include_dir()``)
and oneDNN's and TBB's headers and libraries as the ``onednn-devel-cpu-tbb``, ``tbb-devel`` and ``onednn-cpu-tbb`` wheels
install them (``<prefix>/include``, ``<prefix>/lib``). The module finds libdnnl, libtbb and the Intel compiler's runtime
(which libdnnl needs) beside it at run time through a relative search path: site-packages' ``tripy_kernels/`` is
three levels below ``<prefix>/lib``."""

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
    """The prefix whose include/ has oneDNN's and TBB's headers (`ONEDNN_PREFIX`, or this Python's)."""
    headers = [("oneapi", "dnnl", "dnnl.hpp"), ("oneapi", "tbb", "parallel_for.h")]
    for prefix in [os.environ.get("ONEDNN_PREFIX", ""), sys.prefix, sysconfig.get_config_var("prefix") or ""]:
        if prefix and all(os.path.exists(os.path.join(prefix, "include", *h)) for h in headers):
            return prefix
    raise SystemExit(
        "tripy-kernels: oneDNN's or TBB's headers not found: pip install onednn-cpu-tbb onednn-devel-cpu-tbb tbb-devel"
    )


prefix = onednn_prefix()
setup(
    ext_modules=[
        Extension(
            "tripy_kernels._native",
            sources=["csrc/convolution.cc", "csrc/group_norm.cc", "csrc/pooling.cc"],
            include_dirs=[ffi_include_dir(), os.path.join(prefix, "include")],
            library_dirs=[os.path.join(prefix, "lib")],
            libraries=["dnnl", "tbb"],
            extra_compile_args=["-std=c++17", "-O3", "-fvisibility=hidden"],
            extra_link_args=["-Wl,-rpath,$ORIGIN/../../..", "-Wl,--disable-new-dtags"],
            language="c++",
        )
    ]
)
