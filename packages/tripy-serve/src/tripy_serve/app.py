"""The HTTP routes (a Starlette application): the Open Inference Protocol (KServe v2) for each served
executable, and ``/v1/completions`` for a language model.

Bad requests get a 4xx whose JSON body says why (``{"error": message}``, as the protocol specifies; the
OpenAI routes use ``{"error": {"message", "type"}}``). Any other failure is logged with its traceback and
answered with a 500; the server keeps serving.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Optional, Tuple

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tripy_serve.batching import BatchingModel
from tripy_serve.completions import LanguageModel
from tripy_serve.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE, Metrics
from tripy_serve import __version__
from tripy_serve.repository import ModelStore, check_repository_parameters
from tripy_serve.protocol import EXTENSIONS, ServeError, decode_inputs, encode_outputs, metadata, requested_outputs

log = logging.getLogger("tripy.serve")

HEADER_LENGTH = "Inference-Header-Content-Length"


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) past `limit` bytes before it is all read."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ServeError(
            413,
            f"The request body ({declared} bytes) is larger than this server's limit of {limit} "
            "bytes (--max-body-bytes).",
        )
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise ServeError(
                    413, f"The request body is larger than this server's limit of {limit} bytes (--max-body-bytes)."
                )
    except ClientDisconnect:  # (a body cut short: nobody reads the answer, but it is the client's fault, not ours)
        raise ServeError(400, f"The client went away after {len(body)} bytes of the request body.") from None
    return bytes(body)


def parse_json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ServeError(400, f"The request body is not valid JSON: {e}.") from None


async def read_json(request: Request, limit: int) -> Any:
    return parse_json(await read_body(request, limit))


async def read_infer_request(request: Request, limit: int) -> Tuple[Any, bytes]:
    """An infer request's JSON and its binary section: the body splits after the
    ``Inference-Header-Content-Length`` bytes of JSON (the binary tensor data extension); without that header
    the whole body is JSON."""
    body = await read_body(request, limit)
    header = request.headers.get(HEADER_LENGTH)
    if header is None:
        return parse_json(body), b""
    if not header.isdigit() or int(header) > len(body):
        raise ServeError(
            400,
            f"{HEADER_LENGTH} must be the JSON header's length in bytes (at most the body's "
            f"{len(body)}), not {header!r}.",
        )
    return parse_json(body[: int(header)]), body[int(header) :]


def json_bytes(content: Any) -> bytes:
    """`content` as JSON; NaN and +-Inf as the tokens ``NaN``, ``Infinity``, ``-Infinity``, as Triton writes them
    (Python's ``json`` and rapidjson, which tritonclient uses, read them; strict parsers do not: such a client
    asks for binary outputs)."""
    return json.dumps(content, separators=(",", ":")).encode()


def infer_response(content: Dict[str, Any], binaries: List[bytes]) -> Response:
    """The infer response: JSON, or with binary outputs the JSON then their bytes, with its length in the
    ``Inference-Header-Content-Length`` header."""
    header = json_bytes(content)
    if not binaries:
        return Response(header, media_type="application/json")
    return Response(
        b"".join([header, *binaries]), media_type="application/octet-stream", headers={HEADER_LENGTH: str(len(header))}
    )


async def live(request: Request) -> Response:
    return JSONResponse({"live": True})


async def ready(request: Request) -> Response:
    return JSONResponse({"ready": True})  # models are loaded (and compiled) before the server listens


async def server_metadata(request: Request) -> Response:
    return JSONResponse({"name": "tripy", "version": __version__, "extensions": EXTENSIONS})


RouteTable = List[Tuple[str, Callable[[Request], Awaitable[Response]], List[str]]]


def create_app(
    store: ModelStore,
    lm: Optional[LanguageModel] = None,
    max_body_bytes: int = 64 << 20,
    lifespan: Optional[Callable[[Any], Any]] = None,
    metrics: Optional[Metrics] = None,
) -> Starlette:
    """The application serving the models of `store` and, if given, the language model `lm`; `lifespan`:
    what runs beside it (Starlette's lifespan, e.g. the gRPC server); `metrics`: served on ``/metrics``."""

    async def prometheus(request: Request) -> Response:
        if metrics is None:
            raise ServeError(404, "This server keeps no metrics.")
        return Response(metrics.exposition(), media_type=METRICS_CONTENT_TYPE)

    routes: RouteTable = [
        ("/v2/health/live", live, ["GET"]),
        ("/v2/health/ready", ready, ["GET"]),
        ("/v2", server_metadata, ["GET"]),
        ("/metrics", prometheus, ["GET"]),
    ]
    routes += model_routes(store, max_body_bytes) + repository_routes(store, max_body_bytes)
    routes += completion_routes(lm, max_body_bytes)
    return Starlette(
        lifespan=lifespan, routes=[Route(path, guarded(handler), methods=methods) for path, handler, methods in routes]
    )


def model_routes(store: ModelStore, max_body_bytes: int) -> RouteTable:
    """The protocol's per-model routes: metadata, ready, statistics, infer."""

    def model(request: Request) -> BatchingModel:
        return store.get(request.path_params["name"], request.path_params.get("version"))

    async def model_metadata(request: Request) -> Response:
        m = model(request)
        return JSONResponse(metadata(request.path_params["name"], m.exe, m.parameters()))

    async def model_ready(request: Request) -> Response:
        model(request)
        return JSONResponse({"name": request.path_params["name"], "ready": True})

    async def model_stats(request: Request) -> Response:
        return JSONResponse(
            {"model_stats": [{"name": request.path_params["name"], "version": "1", **model(request).stats.to_json()}]}
        )

    async def infer(request: Request) -> Response:
        m = model(request)
        with m.observed():
            body, binary = await read_infer_request(request, max_body_bytes)
            arrays = decode_inputs(body, m.datatypes, binary)
            requested = requested_outputs(body, list(m.exe.output_infos))
            outputs = dict(zip(m.exe.output_infos, await m.infer(arrays)))
        tensors, binaries = encode_outputs(outputs, requested)
        response: Dict[str, Any] = {"model_name": request.path_params["name"], "model_version": "1", "outputs": tensors}
        if isinstance(body.get("id"), str):
            response["id"] = body["id"]
        return infer_response(response, binaries)

    # (each also under /versions/{version}, as clients address a version; every model has one, "1")
    prefixes = ("/v2/models/{name}", "/v2/models/{name}/versions/{version}")
    return [
        (prefix + suffix, handler, methods)
        for prefix in prefixes
        for suffix, handler, methods in [
            ("", model_metadata, ["GET"]),
            ("/ready", model_ready, ["GET"]),
            ("/stats", model_stats, ["GET"]),
            ("/infer", infer, ["POST"]),
        ]
    ]


def repository_routes(store: ModelStore, max_body_bytes: int) -> RouteTable:
    """The model repository extension: index, load, unload."""

    async def options(request: Request) -> Dict[str, Any]:
        body = parse_json(await read_body(request, max_body_bytes) or b"{}")
        if not isinstance(body, dict):
            raise ServeError(400, "The request body must be a JSON object.")
        parameters = body.get("parameters", {})
        if not isinstance(parameters, dict):
            raise ServeError(400, "'parameters' must be a JSON object.")
        check_repository_parameters(parameters)
        return body

    async def index(request: Request) -> Response:
        ready = (await options(request)).get("ready", False)
        return JSONResponse([e.to_json() for e in store.index(ready_only=ready is True)])

    async def load(request: Request) -> Response:
        await options(request)
        await store.load(request.path_params["name"])
        return JSONResponse({})

    async def unload(request: Request) -> Response:
        await options(request)
        await store.unload(request.path_params["name"])
        return JSONResponse({})

    return [
        ("/v2/repository/index", index, ["POST"]),
        ("/v2/repository/models/{name}/load", load, ["POST"]),
        ("/v2/repository/models/{name}/unload", unload, ["POST"]),
    ]


def completion_routes(lm: Optional[LanguageModel], max_body_bytes: int) -> RouteTable:
    """The OpenAI-style routes of the language model `lm` (if any)."""

    async def completions(request: Request) -> Response:
        if lm is None:
            raise ServeError(404, "This server has no language model (start it with --lm model.json).")
        body = await read_json(request, max_body_bytes)
        if not isinstance(body, dict):
            raise ServeError(400, "The request body must be a JSON object.")
        if body.get("model", lm.name) != lm.name:
            raise ServeError(404, f"Unknown model '{body['model']}'. This server's language model is '{lm.name}'.")
        prompt = lm.prompt_ids(body)
        max_tokens = lm.max_tokens(body, prompt)
        return await complete(lm, prompt, max_tokens, stream=bool(body.get("stream", False)))

    async def list_models(request: Request) -> Response:
        data = [{"id": lm.name, "object": "model", "owned_by": "tripy"}] if lm is not None else []
        return JSONResponse({"object": "list", "data": data})

    return [("/v1/completions", completions, ["POST"]), ("/v1/models", list_models, ["GET"])]


def guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """`handler`, answering a ServeError with its status and any other exception with a logged 500. (Done here
    rather than with Starlette's handler for ``Exception``, which re-raises, so uvicorn drops the connection.)"""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except ServeError as e:
            return refused(request, e)
        except Exception as e:
            return failed(request, e)

    return endpoint


async def complete(lm: LanguageModel, prompt: List[int], max_tokens: int, stream: bool) -> Response:
    """The completion of `prompt`: one JSON response, or server-sent events with one token each."""
    tokens = lm.generate(prompt, max_tokens)
    head = {
        "id": f"cmpl-{uuid.uuid4().hex}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": lm.name,
    }

    def choice(new: List[int], finish: Optional[str], text: Optional[str] = None) -> Dict[str, Any]:
        return {
            "index": 0,
            "text": lm.text(new) if text is None else text,
            "token_ids": new,
            "logprobs": None,
            "finish_reason": finish,
        }

    def finish_reason(new: List[int]) -> str:
        return "stop" if new and new[-1] == lm.eos_token_id else "length"

    if not stream:
        new = await asyncio.to_thread(list, tokens)
        usage = {"prompt_tokens": len(prompt), "completion_tokens": len(new), "total_tokens": len(prompt) + len(new)}
        return JSONResponse({**head, "choices": [choice(new, finish_reason(new))], "usage": usage})

    async def events() -> AsyncIterator[str]:
        done = object()
        new: List[int] = []
        try:
            while (token := await asyncio.to_thread(next, tokens, done)) is not done:
                assert isinstance(token, int)
                # (each event's text is what decoding all the tokens so far adds: a token alone may decode
                # without the space or the bytes it shares with its neighbours)
                before = lm.text(new)
                new.append(token)
                added = lm.text(new)[len(before) :]
                yield f"data: {json.dumps({**head, 'choices': [choice([token], None, added)]})}\n\n"
        except Exception as e:  # the status line is sent: say so in the stream, and log it
            log.error("internal error while streaming a completion", exc_info=e)
            yield f"data: {json.dumps({'error': {'message': f'Internal server error ({e})', 'type': 'server_error'}})}\n\n"
            return
        yield f"data: {json.dumps({**head, 'choices': [{**choice([], finish_reason(new))}]})}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def _openai(request: Request) -> bool:
    return request.url.path.startswith("/v1/")


def refused(request: Request, exc: ServeError) -> Response:
    message = str(exc)
    if _openai(request):
        return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status_code=exc.status)
    return JSONResponse({"error": message}, status_code=exc.status)


def failed(request: Request, exc: Exception) -> Response:
    log.error("internal error while serving %s %s", request.method, request.url.path, exc_info=exc)
    message = f"Internal server error ({type(exc).__name__}: {exc}); the server logged the details."
    if _openai(request):
        return JSONResponse({"error": {"message": message, "type": "server_error"}}, status_code=500)
    return JSONResponse({"error": message}, status_code=500)
