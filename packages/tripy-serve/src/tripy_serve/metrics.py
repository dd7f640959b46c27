"""Prometheus metrics (``GET /metrics``, the text exposition format, with ``prometheus_client``), named and labelled
after Triton Inference Server's (``model`` and ``version`` on every per-model metric; failures by ``reason``):

* ``tripy_inference_request_success_total``, ``tripy_inference_request_failure_total{reason}``: infer requests
  (HTTP and gRPC) answered, and refused or failed (``REJECTED``: a 4xx, the request's fault; ``BACKEND``: the
  server's);
* ``tripy_inference_count_total``, ``tripy_inference_exec_count_total``: rows inferred, executable calls;
* ``tripy_inference_request_duration_seconds``, ``tripy_inference_queue_duration_seconds``,
  ``tripy_inference_compute_duration_seconds``: histograms of a request's time in the server, its wait for a
  batch, and the executable calls' time;
* ``tripy_inference_batch_size``: a histogram of rows per executable call;
* ``tripy_inference_pending_request_count``: requests in flight (a gauge).
"""

from __future__ import annotations

import contextlib
import time
from typing import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from tripy_serve.protocol import ServeError

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_LABELS = ["model", "version"]
# Seconds, from 100 us to 10 s; rows per call, in powers of two.
_TIME_BUCKETS = (1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class Metrics:
    """The server's metrics, in a registry of their own (several servers may share a process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.success = Counter("tripy_inference_request_success", "Infer requests answered", _LABELS, registry=r)
        self.failure = Counter(
            "tripy_inference_request_failure",
            "Infer requests refused (REJECTED) or failed (BACKEND)",
            _LABELS + ["reason"],
            registry=r,
        )
        self.count = Counter("tripy_inference_count", "Rows inferred", _LABELS, registry=r)
        self.exec_count = Counter("tripy_inference_exec_count", "Executable calls", _LABELS, registry=r)
        self.request_time = Histogram(
            "tripy_inference_request_duration_seconds",
            "Time of an infer request in the server",
            _LABELS,
            buckets=_TIME_BUCKETS,
            registry=r,
        )
        self.queue_time = Histogram(
            "tripy_inference_queue_duration_seconds",
            "Time a request waited for its batch",
            _LABELS,
            buckets=_TIME_BUCKETS,
            registry=r,
        )
        self.compute_time = Histogram(
            "tripy_inference_compute_duration_seconds",
            "Time of an executable call",
            _LABELS,
            buckets=_TIME_BUCKETS,
            registry=r,
        )
        self.batch_size = Histogram(
            "tripy_inference_batch_size", "Rows per executable call", _LABELS, buckets=_BATCH_BUCKETS, registry=r
        )
        self.pending = Gauge("tripy_inference_pending_request_count", "Infer requests in flight", _LABELS, registry=r)

    def model(self, name: str) -> "ModelMetrics":
        return ModelMetrics(self, name)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class ModelMetrics:
    """One model's view of the metrics: what the batching and the request handlers record."""

    def __init__(self, metrics: Metrics, name: str) -> None:
        self.m, self.labels = metrics, (name, "1")

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        """Around one infer request: in flight meanwhile, then its duration and its success or failure."""
        m, labels = self.m, self.labels
        m.pending.labels(*labels).inc()
        start = time.perf_counter()
        try:
            yield
        except ServeError as e:
            m.failure.labels(*labels, "REJECTED" if e.status < 500 else "BACKEND").inc()
            raise
        except BaseException:
            m.failure.labels(*labels, "BACKEND").inc()
            raise
        else:
            m.success.labels(*labels).inc()
        finally:
            m.pending.labels(*labels).dec()
            m.request_time.labels(*labels).observe(time.perf_counter() - start)

    def queued(self, seconds: float) -> None:
        self.m.queue_time.labels(*self.labels).observe(seconds)

    def executed(self, rows: int, requests_rows: int, seconds: float) -> None:
        """One executable call of `rows` rows (padding included) for requests of `requests_rows` rows."""
        m = self.m
        m.exec_count.labels(*self.labels).inc()
        m.count.labels(*self.labels).inc(requests_rows)
        m.batch_size.labels(*self.labels).observe(rows)
        m.compute_time.labels(*self.labels).observe(seconds)
