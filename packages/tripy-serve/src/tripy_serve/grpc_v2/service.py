"""``GRPCInferenceService`` (KServe v2) on grpcio's asyncio server, in the event loop of the HTTP server, over the
same models (and their batching): health, server and model metadata, model ready, infer (raw or typed input
contents, raw output contents), statistics.

The handlers are registered under the protocol's service name, ``inference.GRPCInferenceService``, with the
messages of ``kserve_v2.proto``. A refused request ends with the gRPC status of its HTTP one (400
``INVALID_ARGUMENT``, 404 ``NOT_FOUND``, 413 ``RESOURCE_EXHAUSTED``) and the same message; any other failure is
logged and ends ``INTERNAL``.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable, List, Tuple

import grpc
from google.protobuf.message import DecodeError

from tripy_serve import __version__
from tripy_serve.grpc_v2 import kserve_v2_pb2 as pb
from tripy_serve.grpc_v2.tensors import decode_inputs, encode_outputs, requested_outputs
from tripy_serve.protocol import EXTENSIONS, ServeError, metadata
from tripy_serve.repository import ModelStore, check_repository_parameters

log = logging.getLogger("tripy.serve")

SERVICE = "inference.GRPCInferenceService"
STATUS = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    404: grpc.StatusCode.NOT_FOUND,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
}


class InferenceService:
    """The service's methods, each ``(request, context) -> response``, over the models of `store`."""

    def __init__(self, store: ModelStore) -> None:
        self.store = store

    async def ServerLive(self, request: Any, context: Any) -> Any:
        return pb.ServerLiveResponse(live=True)

    async def ServerReady(self, request: Any, context: Any) -> Any:
        return pb.ServerReadyResponse(ready=True)

    async def ModelReady(self, request: Any, context: Any) -> Any:
        self.store.get(request.name, request.version)
        return pb.ModelReadyResponse(ready=True)

    async def ServerMetadata(self, request: Any, context: Any) -> Any:
        return pb.ServerMetadataResponse(name="tripy", version=__version__, extensions=EXTENSIONS)

    async def ModelMetadata(self, request: Any, context: Any) -> Any:
        m = self.store.get(request.name, request.version)
        meta = metadata(request.name, m.exe, m.parameters())
        tensors = {
            kind: [
                pb.ModelMetadataResponse.TensorMetadata(name=t["name"], datatype=t["datatype"], shape=t["shape"])
                for t in meta[kind]
            ]
            for kind in ("inputs", "outputs")
        }
        return pb.ModelMetadataResponse(
            name=request.name, versions=meta["versions"], platform=meta["platform"], **tensors
        )

    async def ModelInfer(self, request: Any, context: Any) -> Any:
        m = self.store.get(request.model_name, request.model_version)
        with m.observed():
            arrays = decode_inputs(request, m.datatypes)
            requested = requested_outputs(request, list(m.exe.output_infos))
            outputs = dict(zip(m.exe.output_infos, await m.infer(arrays)))
        response = pb.ModelInferResponse(model_name=request.model_name, model_version="1", id=request.id)
        encode_outputs(response, outputs, requested)
        return response

    async def ModelStatistics(self, request: Any, context: Any) -> Any:
        names = [request.name] if request.name else sorted(self.store.models)
        if request.name:
            self.store.get(request.name, request.version)
        stats = []
        for name in names:
            s = self.store.get(name).stats
            batches = [
                pb.InferBatchStatistics(batch_size=n, compute_infer=pb.StatisticDuration(count=c))
                for n, c in sorted(s.batch_sizes.items())
            ]
            stats.append(
                pb.ModelStatistics(
                    name=name,
                    version="1",
                    inference_count=s.inference_count,
                    execution_count=s.execution_count,
                    batch_stats=batches,
                )
            )
        return pb.ModelStatisticsResponse(model_stats=stats)

    async def RepositoryIndex(self, request: Any, context: Any) -> Any:
        return pb.RepositoryIndexResponse(
            models=[pb.RepositoryIndexResponse.ModelIndex(**e.to_json()) for e in self.store.index(request.ready)]
        )

    async def RepositoryModelLoad(self, request: Any, context: Any) -> Any:
        _no_parameters(request)
        await self.store.load(request.model_name)
        return pb.RepositoryModelLoadResponse()

    async def RepositoryModelUnload(self, request: Any, context: Any) -> Any:
        _no_parameters(request)
        await self.store.unload(request.model_name)
        return pb.RepositoryModelUnloadResponse()


def _no_parameters(request: Any) -> None:
    check_repository_parameters(request.parameters)


# Each method: (name, request message, response message).
METHODS: List[Tuple[str, Any, Any]] = [
    ("ServerLive", pb.ServerLiveRequest, pb.ServerLiveResponse),
    ("ServerReady", pb.ServerReadyRequest, pb.ServerReadyResponse),
    ("ModelReady", pb.ModelReadyRequest, pb.ModelReadyResponse),
    ("ServerMetadata", pb.ServerMetadataRequest, pb.ServerMetadataResponse),
    ("ModelMetadata", pb.ModelMetadataRequest, pb.ModelMetadataResponse),
    ("ModelInfer", pb.ModelInferRequest, pb.ModelInferResponse),
    ("ModelStatistics", pb.ModelStatisticsRequest, pb.ModelStatisticsResponse),
    ("RepositoryIndex", pb.RepositoryIndexRequest, pb.RepositoryIndexResponse),
    ("RepositoryModelLoad", pb.RepositoryModelLoadRequest, pb.RepositoryModelLoadResponse),
    ("RepositoryModelUnload", pb.RepositoryModelUnloadRequest, pb.RepositoryModelUnloadResponse),
]


def guarded(
    method: Callable[[Any, Any], Awaitable[Any]], name: str, message: Any
) -> Callable[[bytes, Any], Awaitable[Any]]:
    """`method`, taking the request's bytes (parsed here as `message`: one that does not parse is refused, not an
    internal error), ending a refused request with its status and message, and any other failure (logged)
    INTERNAL."""

    async def handle(data: bytes, context: Any) -> Any:
        try:
            try:
                request = message.FromString(data)
            except DecodeError as e:
                raise ServeError(400, f"The request is not a valid {message.__name__} message: {e}.") from None
            return await method(request, context)
        except ServeError as e:
            await context.abort(STATUS.get(e.status, grpc.StatusCode.INTERNAL), str(e))
        except Exception as e:
            log.error("internal error while serving gRPC %s", name, exc_info=e)
            await context.abort(
                grpc.StatusCode.INTERNAL,
                f"Internal server error ({type(e).__name__}: {e}); the server logged the details.",
            )

    return handle


def handler(service: Any) -> grpc.GenericRpcHandler:
    """The generic handler serving `service`'s methods under the protocol's service name."""
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            name: grpc.unary_unary_rpc_method_handler(
                guarded(getattr(service, name), name, request), response_serializer=response.SerializeToString
            )
            for name, request, response in METHODS
        },
    )


async def start(service: Any, host: str, port: int, max_message_bytes: int) -> grpc.aio.Server:
    """A started gRPC server for `service` on host:port, taking messages up to `max_message_bytes`."""
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
        ]
    )
    server.add_generic_rpc_handlers((handler(service),))
    if server.add_insecure_port(f"{host}:{port}") == 0:
        raise OSError(f"cannot listen for gRPC on {host}:{port}")
    await server.start()
    return server
