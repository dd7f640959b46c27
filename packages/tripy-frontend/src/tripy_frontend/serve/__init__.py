"""Serving saved executables over HTTP (``tripy serve``; the ``serve`` extra: Starlette on uvicorn).

* ``cli``: the command line; loads the executables and runs uvicorn;
* ``app``: the routes (Open Inference Protocol, ``/v1/completions``) and error responses;
* ``protocol``: JSON tensors and model metadata to and from NumPy;
* ``batching``: dynamic batching of concurrent requests;
* ``completions``: greedy generation with a language model's KV-cache programs.

Only ``cli`` may be imported without the extra installed.
"""
