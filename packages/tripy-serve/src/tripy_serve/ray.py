"""``tripy serve``'s application in a Ray Serve deployment (``pip install 'tripy-inference[ray]'``): the Open
Inference Protocol routes and tripy serve's own batching in each replica. ``tripy.ray`` has the rest of the Ray
integration (Ray Data, a deployment with Ray Serve's batching); see the guide *Scaling out*."""

from __future__ import annotations

from typing import Any, Mapping

from tripy.ray import ExecutableSource, executable_of
from tripy_serve.app import create_app
from tripy_serve.repository import Batching, ModelStore

try:  # (the optional extra: only users of this module need Ray)
    from ray import serve
except ImportError as e:  # pragma: no cover (tests/ray runs with Ray installed)
    raise ImportError(
        f"tripy_serve.ray needs Ray and its Serve library ({e}): pip install 'tripy-inference[ray]'"
    ) from e

__all__ = ["oip_deployment"]


@serve.deployment
@serve.ingress()
class _OpenInferenceProtocol:
    """``tripy serve``'s application (the Open Inference Protocol routes) inside a Ray Serve replica."""

    def __init__(self, models: Mapping[str, ExecutableSource], max_batch: int, max_wait: float) -> None:
        self.store = ModelStore(Batching(max_batch, max_wait))
        for name, source in models.items():
            self.store.add(name, executable_of(source))

    def __serve_build_asgi_app__(self) -> Any:
        return create_app(self.store)


def oip_deployment(
    models: Mapping[str, ExecutableSource], *, max_batch: int = 16, max_wait_ms: float = 2.0, **options: Any
) -> Any:
    """A Ray Serve application serving `models` (name -> executable or saved file) with ``tripy serve``'s own
    application: the Open Inference Protocol routes (``/v2/models/<name>/infer``, metadata, readiness, statistics)
    and its batching (``--max-batch``, ``--max-wait-ms``), in each replica. `options` go to Ray Serve's
    ``Deployment.options``.

    .. code-block:: python

        serve.run(oip_deployment({"mlp": "mlp.tpexe"}, num_replicas=2), route_prefix="/")
    """
    return _OpenInferenceProtocol.options(**options).bind(  # type: ignore[attr-defined]
        dict(models), max_batch, max_wait_ms / 1e3
    )
