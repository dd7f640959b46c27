"""Serving saved tripy executables over HTTP (``tripy serve``; Starlette on uvicorn), with only ``tripy``'s public
API.

* ``cli``: the command line (``tripy serve``); loads the executables and runs uvicorn;
* ``app``: the routes (Open Inference Protocol, ``/v1/completions``) and error responses;
* ``protocol``: JSON tensors and model metadata to and from NumPy;
* ``batching``: dynamic batching of concurrent requests;
* ``completions``: greedy generation with a language model's KV-cache programs.
"""

import importlib.metadata as _metadata

__version__ = _metadata.version("tripy-serve")
