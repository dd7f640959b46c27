"""Serving saved tripy executables over HTTP (``tripy serve``; Starlette on uvicorn), with only ``tripy``'s public
API.

* ``cli``: the command line (``tripy serve``); loads the models and runs uvicorn (and the gRPC server beside it);
* ``app``: the HTTP routes (Open Inference Protocol, repository, ``/metrics``, ``/v1/completions``) and errors;
* ``grpc_v2``: the protocol over gRPC (KServe v2 ``GRPCInferenceService``): messages, tensors, service;
* ``protocol``: tensors (JSON and binary) and model metadata to and from NumPy;
* ``repository``: the served models, and loading and unloading them from a directory of ``.tpexe`` files;
* ``batching``: dynamic batching of concurrent requests;
* ``metrics``: Prometheus metrics;
* ``completions``: greedy generation with a language model's KV-cache programs.
"""

import importlib.metadata as _metadata

__version__ = _metadata.version("tripy-serve")
