"""``ScriptedOpenAIServer``: a real OpenAI-compatible HTTP server on loopback whose replies are scripted.

    with ScriptedOpenAIServer([tool_call_turn([("search", {"q": "x"})]), text_turn("done")]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test")
        ...
        assert server.chat_requests[1]["messages"][-1]["role"] == "tool"

Routes: ``POST /v1/chat/completions`` (stream and non-stream), ``POST /v1/embeddings``, ``POST /v1/rerank``,
``GET /v1/models``. Every request is recorded in ``server.requests``.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import struct
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from fathom.llm.chat import OpenAIChatModel
from fathom.llm.model_config import ModelConfig
from fathom.llm.retry import RetryPolicy
from fathom.llm.tokens import count_message_tokens, count_tokens
from fathom.testing._http import BackgroundHttpServer, HttpRequest, HttpResponse
from fathom.testing.fake_vectors import hash_embedding, overlap_score
from fathom.testing.scripted_turns import (
    Turn,
    call_ids,
    completion_body,
    error_body,
    stream_chunks,
    text_turn,
)

TurnSource = Turn | str | Callable[["RecordedRequest"], Any]
Script = Iterable[TurnSource] | Callable[["RecordedRequest"], Any]

_JSON = {"content-type": "application/json"}


@dataclass
class RecordedRequest:
    """A request the server received: method, path, lower-cased headers, raw body and parsed JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any
    raw: HttpRequest

    @property
    def disconnected(self) -> bool:
        """True when the client hung up before the (streamed) response ended."""
        return self.raw.disconnected.is_set()

    @property
    def messages(self) -> list[Any]:
        """The chat ``messages`` of the request body (empty for other routes)."""
        return list(self.json.get("messages") or []) if isinstance(self.json, dict) else []

    @property
    def tool_names(self) -> list[str]:
        """Names of the function tools offered to the model in this request."""
        tools = self.json.get("tools") if isinstance(self.json, dict) else None
        return [
            str((tool.get("function") or {}).get("name")) for tool in tools or [] if isinstance(tool, dict)
        ]

    def wait_disconnected(self, timeout: float = 5.0) -> bool:
        """Block until the client hung up (True) or ``timeout`` seconds passed (False)."""
        return self.raw.disconnected.wait(timeout)


def _json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> HttpResponse:
    return HttpResponse(
        status=status, headers={**_JSON, **(headers or {})}, body=json.dumps(payload).encode()
    )


class ScriptedOpenAIServer:
    """A loopback OpenAI-compatible server replying from a script; usable as (async) context manager.

    ``script`` is a list of turns (``Turn``, a plain string, or a function of the request returning
    either) consumed one per chat request, or one function of the request used for every chat request.
    ``api_key`` (optional) makes the server demand ``Authorization: Bearer <api_key>``.
    """

    def __init__(
        self,
        script: Script = (),
        *,
        model: str = "scripted-chat",
        models: Sequence[str] = ("scripted-chat", "scripted-embedding", "scripted-rerank"),
        embedding_dim: int = 256,
        embed_fn: Callable[[str, int], list[float]] | None = None,
        rerank_fn: Callable[[str, str], float] | None = None,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._lock = threading.Lock()
        self._turns: list[TurnSource] = []
        self._script_fn: Callable[[RecordedRequest], Any] | None = None
        self.set_script(script)
        self.model = model
        self.models = list(models)
        self.embedding_dim = embedding_dim
        self.embed_fn = embed_fn or hash_embedding
        self.rerank_fn = rerank_fn or overlap_score
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self.turns_used = 0
        self._http = BackgroundHttpServer(self._handle, host=host, port=port)
        self._host = host

    # -- script -----------------------------------------------------------------------------------

    def set_script(self, script: Script) -> None:
        """Replace the script (a list of turns or one function of the request)."""
        with self._lock:
            if callable(script):
                self._script_fn, self._turns = script, []
            else:
                self._script_fn, self._turns = None, list(script)

    def add_turns(self, *turns: TurnSource) -> None:
        """Append turns to the script."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def remaining_turns(self) -> int:
        """Turns not yet consumed."""
        with self._lock:
            return len(self._turns)

    async def _next_turn(self, request: RecordedRequest) -> Turn:
        with self._lock:
            if self._script_fn is not None:
                source: TurnSource | None = self._script_fn
            elif self._turns:
                source = self._turns.pop(0)
            else:
                source = None
            self.turns_used += 1
            number = self.turns_used
        if source is None:
            return Turn(status=400, error=f"ScriptedOpenAIServer: script exhausted (chat request #{number})")
        reply = source(request) if callable(source) else source
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, str):
            return text_turn(reply)
        if not isinstance(reply, Turn):
            raise TypeError(f"script produced {type(reply).__name__}, expected Turn or str")
        return reply

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        """Start serving on a free loopback port."""
        self._http.start()
        return self

    def stop(self) -> None:
        """Stop serving and drop open connections."""
        self._http.stop()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> ScriptedOpenAIServer:
        return self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    @property
    def port(self) -> int:
        """The bound port (0 before start)."""
        return self._http.port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:{port}/v1``, what the ``openai`` client wants as ``base_url``."""
        return f"http://{self._host}:{self.port}/v1"

    def model_config(self, model_id: str | None = None, **overrides: Any) -> ModelConfig:
        """A :class:`ModelConfig` pointing at this server (type llm unless ``type=`` is given)."""
        fields: dict[str, Any] = {
            "id": model_id or self.model,
            "base_url": self.base_url,
            "max_context": 128000,
        }
        fields.update(overrides)
        return ModelConfig.model_validate(fields)

    def chat_model(self, model_id: str | None = None, **overrides: Any) -> OpenAIChatModel:
        """An :class:`OpenAIChatModel` on this server with near-instant retry backoff (for tests)."""
        return OpenAIChatModel(
            self.model_config(model_id, **overrides), retry=RetryPolicy(initial_delay=0.01)
        )

    # -- recorded traffic -------------------------------------------------------------------------

    def requests_to(self, suffix: str) -> list[RecordedRequest]:
        """Recorded requests whose path ends with ``suffix`` (e.g. ``/chat/completions``)."""
        return [r for r in list(self.requests) if r.path.split("?")[0].endswith(suffix)]

    @property
    def chat_requests(self) -> list[Any]:
        """JSON bodies of the chat completion requests, in arrival order."""
        return [r.json for r in self.requests_to("/chat/completions")]

    @property
    def embedding_requests(self) -> list[Any]:
        """JSON bodies of the embeddings requests."""
        return [r.json for r in self.requests_to("/embeddings")]

    @property
    def rerank_requests(self) -> list[Any]:
        """JSON bodies of the rerank requests."""
        return [r.json for r in self.requests_to("/rerank")]

    def clear(self) -> None:
        """Forget recorded requests."""
        self.requests.clear()

    # -- HTTP -------------------------------------------------------------------------------------

    async def _handle(self, raw: HttpRequest) -> HttpResponse:
        try:
            parsed = json.loads(raw.body) if raw.body else None
        except ValueError:
            parsed = None
        request = RecordedRequest(raw.method, raw.path, raw.headers, raw.body, parsed, raw)
        self.requests.append(request)
        number = len(self.requests)
        headers = {"x-request-id": f"req_scripted_{number}"}
        if self.api_key is not None and raw.headers.get("authorization") != f"Bearer {self.api_key}":
            error = {
                "message": "Incorrect API key provided",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
            return _json_response(401, {"error": error}, headers)
        path = raw.path.split("?")[0].rstrip("/")
        route = (raw.method, path.removeprefix("/v1"))
        if route != ("GET", "/models") and not isinstance(parsed, dict):
            return _json_response(400, {"error": {"message": "body must be a JSON object"}}, headers)
        body: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
        try:
            if route == ("POST", "/chat/completions"):
                return await self._chat(request, number, headers)
            if route == ("POST", "/embeddings"):
                return _json_response(200, self._embeddings(body), headers)
            if route == ("POST", "/rerank"):
                return _json_response(200, self._rerank(body), headers)
            if route == ("GET", "/models"):
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fathom"} for m in self.models]
                return _json_response(200, {"object": "list", "data": data}, headers)
        except Exception as exc:  # a broken script must show up in the test, not hang it
            return _json_response(500, {"error": {"message": f"ScriptedOpenAIServer: {exc!r}"}}, headers)
        return _json_response(404, {"error": {"message": f"no route {raw.method} {raw.path}"}}, headers)

    async def _chat(self, request: RecordedRequest, number: int, headers: dict[str, str]) -> HttpResponse:
        body = request.json
        turn = await self._next_turn(request)
        if turn.status != 200:
            return _json_response(turn.status, error_body(turn), {**headers, **turn.headers})
        model = str(body.get("model") or self.model)
        completion_id = f"chatcmpl-scripted-{number}"
        ids = call_ids(turn, number)
        usage = self._usage(turn, body)
        if not body.get("stream"):
            payload = completion_body(turn, completion_id=completion_id, model=model, ids=ids, usage=usage)
            return _json_response(200, payload, {**headers, **turn.headers})
        chunks = stream_chunks(turn, completion_id=completion_id, model=model, ids=ids)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage")) and turn.send_usage
        tail: dict[str, Any] | None = None
        if include_usage:
            tail = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": chunks[0]["created"],
                "model": model,
                "choices": [],
                "usage": usage,
            }
        stream_headers = {
            **headers,
            **turn.headers,
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
        }
        return HttpResponse(200, stream_headers, stream=self._sse(turn, chunks, tail))

    async def _sse(
        self, turn: Turn, chunks: list[dict[str, Any]], tail: dict[str, Any] | None
    ) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(chunks):
            if turn.delay:
                await asyncio.sleep(turn.delay)
            if turn.stream_error and index == len(chunks) - 1:
                error = {"error": {"message": turn.stream_error, "type": "server_error"}}
                yield f"data: {json.dumps(error)}\n\n".encode()
                return
            yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
        if tail is not None:
            yield f"data: {json.dumps(tail)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    @staticmethod
    def _usage(turn: Turn, body: dict[str, Any]) -> dict[str, int]:
        if turn.usage is not None:
            prompt, completion = turn.usage
        else:
            prompt = count_message_tokens(body.get("messages") or [], body.get("tools"))
            completion = count_tokens(turn.content) + count_tokens(turn.reasoning)
            completion += sum(count_tokens(c.name) + count_tokens(c.arguments_text) for c in turn.tool_calls)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        raw_input = body.get("input")
        items = [raw_input] if isinstance(raw_input, str) else list(raw_input or [])
        if items and all(isinstance(x, int) for x in items):
            items = [items]  # one token array
        texts = [x if isinstance(x, str) else json.dumps(x) for x in items]
        dim = int(body.get("dimensions") or self.embedding_dim)
        data = []
        for index, text in enumerate(texts):
            vector = self.embed_fn(text, dim)
            embedding: Any = vector
            if body.get("encoding_format") == "base64":
                embedding = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(count_tokens(text) for text in texts)
        return {
            "object": "list",
            "data": data,
            "model": str(body.get("model") or "scripted-embedding"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _rerank(self, body: dict[str, Any]) -> dict[str, Any]:
        query = str(body.get("query") or "")
        documents = [
            d.get("text", "") if isinstance(d, dict) else str(d) for d in body.get("documents") or []
        ]
        scored = sorted(
            ((index, self.rerank_fn(query, doc)) for index, doc in enumerate(documents)),
            key=lambda pair: (-pair[1], pair[0]),
        )
        top_n = body.get("top_n")
        if isinstance(top_n, int) and top_n >= 0:
            scored = scored[:top_n]
        results = [
            {"index": index, "relevance_score": score, "document": {"text": documents[index]}}
            for index, score in scored
        ]
        tokens = count_tokens(query) * max(1, len(documents)) + sum(count_tokens(d) for d in documents)
        return {
            "id": f"rerank-scripted-{len(self.requests)}",
            "model": str(body.get("model") or "scripted-rerank"),
            "results": results,
            "usage": {"total_tokens": tokens},
        }
