"""Running an app for a chat request: history per ``chatId`` rules, stored-variable merge, resume of
a pending interactive, the turn stored as it starts (the question and a ``running`` answer, see
:mod:`fathom.chat.turn_lease`), the run in a background task writing numbered frames, then the answer
and the usage records stored in one transaction (retried with backoff through a database outage while
the client waits). Streaming and non-streaming responses are both read from the same frames."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from fathom.chat.apps import AppGraph, AppService
from fathom.chat.channel import DONE, ChatKey, RunChannel, RunRegistry
from fathom.chat.errors import ChatError
from fathom.chat.fanout import RedisFanout, RemoteChannel
from fathom.chat.ids import nanoid
from fathom.chat.messages import concat_histories, split_messages, text_value, value_text
from fathom.chat.ownership import ChatCaller, owner_kind
from fathom.chat.question_guide import guide_after_run
from fathom.chat.run_access import run_readers
from fathom.chat.run_files import RunFilePolicy, prepare_run_files
from fathom.chat.run_services import NO_MODEL_HINT, RunServicesFactory
from fathom.chat.run_state import ChatOutcome, ChatRequest, PreparedRun
from fathom.chat.secret_variables import seal_password_variables, without_password_variables
from fathom.chat.turn_lease import DEFAULT_LEASE_S, RUNNING, TurnHeartbeat
from fathom.chat.turn_overlap import TurnStart
from fathom.store.errors import database_unavailable, is_database_error
from fathom.store.protocols import (
    ApiKeyRepository,
    AppOwnerRepository,
    ChatItemRecord,
    ChatRepository,
    ChatTurn,
    ChatTurnRepository,
    HistoryItem,
    UsageRecord,
    UsageRepository,
)
from fathom.workflow import (
    InteractiveEvent,
    NodeResponseEvent,
    WorkflowEvent,
    event_name,
    get_last_interactive_value,
    mark_interactive_answered,
    run_workflow,
    text_adapt_gpt_response,
)

log = logging.getLogger("fathom.chat")

PLUGIN_TYPES = ("plugin", "tool")
TITLE_LENGTH = 20
MAX_CHAT_ID_LENGTH = 1024
# a run that lost the database (its text names the host and port: logs only)
RUN_NOT_SAVED = "Database unavailable: this answer was not saved; retry in a few seconds"
RUN_FAILED_IN_DATABASE = "Database error: this answer was not saved (the server log has the details)"
# how long a finished run keeps trying to store its answer through a database outage
SAVE_PATIENCE_S = 30.0
MAX_SAVE_BACKOFF_S = 2.0


def _run_error(exc: Exception) -> str:
    """What a client is told of a crashed run: a database's error as one plain sentence (the driver's
    text names the host, the port and the SQL: logs only), anything else as its message."""
    if database_unavailable(exc):
        return RUN_NOT_SAVED
    if is_database_error(exc):
        return RUN_FAILED_IN_DATABASE
    return str(exc) or type(exc).__name__


def _inject_plugin_inputs(
    workflow: dict[str, Any], variables: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A plugin run: each ``pluginInput`` input takes the variable of its key, and the user query is
    synthesized from those values (FastGPT ``updatePluginInputByVariables`` + ``getPluginRunUserQuery``)."""
    nodes = []
    given: dict[str, Any] = {}
    for node in workflow.get("nodes") or []:
        if node.get("flowNodeType") == "pluginInput":
            inputs = []
            for item in node.get("inputs") or []:
                key = item.get("key")
                if key in variables:
                    item = {**item, "value": variables[key]}
                    given[str(key)] = variables[key]
                inputs.append(item)
            node = {**node, "inputs": inputs}
        nodes.append(node)
    files = [
        {"type": "file", "file": {"type": "file", "name": "", "url": str(url)}}
        for url in variables.get("files") or []
        if isinstance(url, str)
    ]
    query = [text_value(json.dumps(given, ensure_ascii=False)), *files]
    return {**workflow, "nodes": nodes}, query


def _item_to_history(item: HistoryItem) -> dict[str, Any]:
    return {"dataId": item.data_id, "obj": item.obj, "value": list(item.value)}


def _request_caller(request: ChatRequest) -> ChatCaller:
    """Who makes a chat request, as the ownership rule sees them (appending is the owner's alone)."""
    if request.share_id:
        return ChatCaller.of_visitor(request.share_id, request.out_link_uid or "")
    return ChatCaller.of_member_or_key(request.member_id, request.api_key_id, manages_app=False)


def _answer_of(query: list[dict[str, Any]]) -> Any:
    """The user's answer to an interactive: form values when the text is a JSON object, else the text."""
    text = value_text(query)
    try:
        parsed = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text
    return parsed if isinstance(parsed, dict) else text


class ChatService:
    """Starts chat runs and stores what they produce."""

    def __init__(
        self,
        apps: AppService,
        chats: ChatRepository,
        usage: UsageRepository,
        services: RunServicesFactory,
        *,
        turns: ChatTurnRepository,
        api_keys: ApiKeyRepository | None = None,
        registry: RunRegistry | None = None,
        fanout: RedisFanout | None = None,
        app_owners: AppOwnerRepository | None = None,
        file_policy: RunFilePolicy | None = None,
        lease_s: float = DEFAULT_LEASE_S,
        save_patience_s: float = SAVE_PATIENCE_S,
    ) -> None:
        self.apps = apps
        self.chats = chats
        self.usage = usage
        self.services = services
        self.turns = turns
        self.api_keys = api_keys
        self.registry = registry or RunRegistry()
        self.fanout = fanout
        self.app_owners = app_owners
        self.file_policy = file_policy
        self.lease_s = lease_s
        self.save_patience_s = save_patience_s
        self.heartbeat = TurnHeartbeat(turns, lease_s)
        self._tasks: set[asyncio.Task[None]] = set()

    # -- preparing ---------------------------------------------------------------------------------

    async def prepare(self, request: ChatRequest) -> PreparedRun:
        """Everything checked and loaded before the run starts (raises :class:`ChatError`)."""
        if request.workflow is not None:
            app = await self.apps.apps.get_app(request.team_id, request.app_id)
            graph = AppGraph(app, request.workflow, None)
        else:
            graph = await self.apps.run_graph(
                request.team_id, request.app_id, draft=request.draft, app=request.app
            )
        plugin = graph.app.type in PLUGIN_TYPES
        earlier, query = split_messages(request.messages, plugin=plugin)
        variables_in = request.variables if isinstance(request.variables, dict) else {}
        if plugin:
            workflow, query = _inject_plugin_inputs(graph.workflow, variables_in)
            graph = AppGraph(graph.app, workflow, graph.version_id)
            variables_in = {}  # plugin inputs are not global variables
        given = bool(request.chat_id)
        if given and len(str(request.chat_id)) > MAX_CHAT_ID_LENGTH:
            raise ChatError(
                f"chatId: at most {MAX_CHAT_ID_LENGTH} characters",
                http_status=400,
                status_text="invalidParams",
            )
        chat_id = str(request.chat_id) if given else nanoid()
        stored: list[dict[str, Any]] = []
        chat = None
        if given:
            history = await self.turns.load_history(
                request.team_id, request.app_id, chat_id, graph.history_limit
            )
            chat = history.chat
            if chat is not None and not _request_caller(request).may(chat, "write"):
                raise ChatError(
                    f"chatId: chat {chat_id} belongs to another caller; start a new chat with a new chatId",
                    http_status=403,
                    status_text="unAuthChat",
                )
            # an answer still running (another request's) or interrupted is no history for the model
            stored = [_item_to_history(item) for item in history.items if item.status is None]
        histories = concat_histories(stored, earlier)
        variables = {**(chat.variables if chat is not None else {}), **variables_in}
        prepared = PreparedRun(
            request=request,
            graph=graph,
            chat_id=chat_id,
            chat_id_given=given,
            response_chat_item_id=request.response_chat_item_id or nanoid(),
            query=query,
            histories=histories,
            variables=variables,
            chat_exists=chat is not None,
            detail=request.detail or plugin,
        )
        pending = get_last_interactive_value(stored) if stored else None
        if pending is not None:
            last_ai = next(item for item in reversed(stored) if item["obj"] == "AI")
            prepared.resume_item = last_ai
            prepared.histories = stored  # the pause must stay the last AI turn the run sees
            prepared.resume_answer = _answer_of(query)
            prepared.response_chat_item_id = last_ai["dataId"]
        elif chat is not None and request.response_chat_item_id:
            await self._check_new_item_id(request, chat_id, request.response_chat_item_id)
        if self.file_policy is not None:
            prepared.files = await prepare_run_files(
                self.file_policy,
                query=prepared.query,
                histories=prepared.histories,
                app_id=request.app_id,
                uid=request.custom_uid or request.member_id,
                chat_id=chat_id,
                chat_config=graph.chat_config,
            )
        return prepared

    async def _check_new_item_id(self, request: ChatRequest, chat_id: str, data_id: str) -> None:
        if await self.turns.has_item(request.team_id, request.app_id, chat_id, data_id):
            raise ChatError(
                f"responseChatItemId: {data_id} is already used in chat {chat_id}; send a new id",
                http_status=409,
                status_text="conflict",
            )

    # -- running -----------------------------------------------------------------------------------

    def key(self, prepared: PreparedRun) -> ChatKey:
        return (prepared.request.team_id, prepared.request.app_id, prepared.chat_id)

    async def start(self, request: ChatRequest) -> RunChannel:
        """Prepare, then run in the background; read the returned channel for frames and outcome. A new
        turn is stored before the channel is returned (no frame leaves before), while its run waits on
        its model (:mod:`fathom.chat.turn_overlap`); the run stores its end only after that."""
        prepared = await self.prepare(request)
        channel = RunChannel(self.key(prepared), prepared.response_chat_item_id)
        channel.detail = prepared.detail
        channel.owner = _request_caller(request)
        loop = asyncio.get_running_loop()
        # a new turn is stored while its run starts; a resumed interactive's turn is stored already
        start = TurnStart() if prepared.resume_item is None else None
        task = loop.create_task(
            self._run(prepared, channel, start), context=start.context if start is not None else None
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if start is not None:
            await start.write(task, lambda: self._begin(prepared))
            if not task.done() and not start.taken_over:  # a running answer is stored: keep it alive
                beat = (request.app_id, prepared.chat_id, prepared.response_chat_item_id)
                self.heartbeat.add(beat)
                task.add_done_callback(lambda _: self.heartbeat.discard(beat))
        self.registry.add(channel)
        if self.fanout is not None:
            self.fanout.listen(self.registry.stop)
            channel.listeners.append(self.fanout.mirror(channel))  # it copies the frames already pushed
        return channel

    async def stop(self, team_id: str, app_id: str, chat_id: str) -> bool:
        """Stop the chat's running run, here or (with Redis) on another replica; False if none runs."""
        key = (team_id, app_id, chat_id)
        if self.registry.stop(key):
            return True
        return await self.fanout.publish_stop(key) if self.fanout is not None else False

    async def redis_status(self) -> str | None:
        """``ok`` or ``unavailable`` for the Redis shared with other replicas; None when there is none."""
        return await self.fanout.status() if self.fanout is not None else None

    async def channel(
        self, team_id: str, app_id: str, chat_id: str, *, detail: bool = True
    ) -> RunChannel | RemoteChannel | None:
        """The chat's latest run frames: this process's, else (with Redis) another replica's mirror."""
        key = (team_id, app_id, chat_id)
        local = self.registry.get(key)
        if local is not None or self.fanout is None:
            return local
        return await self.fanout.find(key, detail)

    async def _run(self, prepared: PreparedRun, channel: RunChannel, start: TurnStart | None) -> None:
        request = prepared.request
        texts: list[str] = []

        chat_config = prepared.graph.chat_config

        def emit(event: WorkflowEvent) -> None:
            name = event_name(event)
            if isinstance(event, NodeResponseEvent) and event.depth > 1:
                return
            data = event.sse_data()
            if name == "updateVariables" and isinstance(data, dict):
                data = without_password_variables(data, chat_config)
            if isinstance(event, InteractiveEvent):
                data = {
                    **data,
                    "chatId": prepared.chat_id,
                    "responseChatItemId": prepared.response_chat_item_id,
                }
            if name in ("answer", "fastAnswer"):
                delta = data["choices"][0]["delta"]
                texts.append(delta.get("content") or "")
            channel.push(name, data)

        outcome = ChatOutcome(prepared, None)
        try:
            owner = request.app_owner
            if request.app is None and self.app_owners is not None:
                owner = await self.app_owners.owner_of(request.app_id)
            files = prepared.files
            result = await run_workflow(
                prepared.graph.loaded or prepared.graph.workflow,
                query=files.query if files is not None else prepared.query,
                variables=prepared.variables,
                histories=files.histories if files is not None else prepared.histories,
                file_store=files.store if files is not None else None,
                services=self.services.for_team(request.team_id, run_readers(owner, request.member_id)),
                emit=emit,
                stop=channel.stop,
                chat_id=prepared.chat_id,
                response_chat_item_id=prepared.response_chat_item_id,
                app_id=request.app_id,
                user_id=request.custom_uid or request.member_id,
                stream=request.stream,
                mode="test" if request.draft else "chat",
            )
            outcome.result = result
            outcome.text = "".join(texts)
            if start is not None and start.take_over():  # ended before its first write: one write
                try:
                    await self._persist(prepared, outcome)
                except Exception as exc:
                    start.whole_stored(exc)  # raised to the client as a failed first write: nothing sent
                    return
                start.whole_stored()
            else:
                if start is not None:
                    await start.stored()  # the turn's start is stored before its end
                await self._persist_patiently(prepared, outcome)
            if request.stream and result.error == NO_MODEL_HINT:
                outcome.error = result.error  # a setup problem: stream clients get an error event too
        except ChatError as exc:
            outcome.error = exc.message
        except Exception as exc:  # the run crashed: the client gets the error, the server the trace
            log.exception("chat run failed (app %s, chat %s)", request.app_id, prepared.chat_id)
            outcome.error = _run_error(exc)
        if outcome.error is not None:
            channel.push("error", {"message": outcome.error})
        else:
            outcome.question_guide = await guide_after_run(self.services.models, self.usage, outcome)
            if outcome.question_guide is not None:  # Fathom's event (detailed streams), before [DONE]
                channel.push("questionGuide", outcome.question_guide)
            channel.push("answer", text_adapt_gpt_response(None, finish_reason="stop"))
            channel.push("answer", DONE)
            assert outcome.result is not None
            channel.push("flowResponses", outcome.result.flow_responses)
        channel.close(outcome)

    # -- storing -----------------------------------------------------------------------------------

    def _turn(self, prepared: PreparedRun, variables: dict[str, Any], **parts: Any) -> ChatTurn:
        request = prepared.request
        return ChatTurn(
            team_id=request.team_id,
            app_id=request.app_id,
            chat_id=prepared.chat_id,
            new_chat=not prepared.chat_exists,
            variables=variables,
            source=request.source,
            title=None if prepared.chat_exists else value_text(prepared.query)[:TITLE_LENGTH] or "Chat",
            metadata=request.metadata if isinstance(request.metadata, dict) else None,
            member_id=request.member_id,
            chat_id_generated=not prepared.chat_id_given,
            share_link_id=parts.pop("share_link_id", request.share_link_id),
            share_id=request.share_id,
            out_link_uid=request.out_link_uid,
            owner_kind=owner_kind(api_key_id=request.api_key_id, share_id=request.share_id),
            api_key_id=None if request.share_id else request.api_key_id,
            **parts,
        )

    async def _begin(self, prepared: PreparedRun) -> None:
        """The turn stored as its run starts, in one transaction with the chat: the question and the
        answer marked ``running`` (its heartbeat kept while the run goes on)."""
        request = prepared.request
        variables = seal_password_variables(
            dict(prepared.variables),
            prepared.graph.chat_config,
            self.services.secrets,
            given=request.variables,
            stored=prepared.variables,
        )
        items = (
            ChatItemRecord(
                data_id=nanoid(),
                chat_id=prepared.chat_id,
                app_id=request.app_id,
                obj="Human",
                value=prepared.query,
            ),
            ChatItemRecord(
                data_id=prepared.response_chat_item_id,
                chat_id=prepared.chat_id,
                app_id=request.app_id,
                obj="AI",
                value=[],
                status=RUNNING,
            ),
        )
        await self.turns.save_turn(self._turn(prepared, variables, items=items, share_link_id=None))
        prepared.chat_exists = True
        prepared.begun = True
        prepared.begun_variables = variables

    async def _persist_patiently(self, prepared: PreparedRun, outcome: ChatOutcome) -> None:
        """:meth:`_persist`, tried again with backoff while the database is unavailable, up to
        ``save_patience_s`` (the client's stream stays open meanwhile, kept alive by heartbeats)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.save_patience_s
        failures = 0
        while True:
            try:
                await self._persist(prepared, outcome)
            except Exception as exc:
                if not database_unavailable(exc) or loop.time() >= deadline:
                    raise
                failures += 1
                if failures == 1:
                    log.warning(
                        "database unavailable: storing the answer of chat %s again when it returns",
                        prepared.chat_id,
                    )
                await asyncio.sleep(
                    min(MAX_SAVE_BACKOFF_S, 0.1 * 2**failures, max(0.0, deadline - loop.time()))
                )
                continue
            if failures:
                log.info("stored the answer of chat %s after %d failed write(s)", prepared.chat_id, failures)
            return

    async def _persist(self, prepared: PreparedRun, outcome: ChatOutcome) -> None:
        """The turn in one transaction: chat, items (or the resumed item) and usage records; the key's
        usage counters are written behind (:meth:`ApiKeyRepository.record_use`)."""
        request = prepared.request
        result = outcome.result
        assert result is not None
        app_id, chat_id = request.app_id, prepared.chat_id
        new_value = list(result.assistant_responses)
        if result.stopped and outcome.text and not value_text(new_value):
            new_value = [text_value(outcome.text)]  # keep what the user already saw of a stopped answer
        variables = seal_password_variables(
            {**prepared.variables, **result.new_variables},
            prepared.graph.chat_config,
            self.services.secrets,
            given=request.variables,
            stored=prepared.variables,
        )
        items: tuple[ChatItemRecord, ...] = ()
        resumed = None
        if prepared.resume_item is not None:
            old_value = list(prepared.resume_item["value"])
            old_value[-1] = {
                **old_value[-1],
                "interactive": mark_interactive_answered(
                    old_value[-1]["interactive"], prepared.resume_answer
                ),
            }
            value = [*old_value, *new_value]
            resumed = ChatItemRecord(
                data_id=prepared.response_chat_item_id,
                chat_id=chat_id,
                app_id=app_id,
                obj="AI",
                value=value,
                response_data=list(result.flow_responses),
                duration_seconds=result.duration_seconds,
            )
            outcome.assistant_value = value
        else:
            items = (
                ChatItemRecord(
                    data_id=nanoid(), chat_id=chat_id, app_id=app_id, obj="Human", value=prepared.query
                ),
                ChatItemRecord(
                    data_id=prepared.response_chat_item_id,
                    chat_id=chat_id,
                    app_id=app_id,
                    obj="AI",
                    value=new_value,
                    response_data=list(result.flow_responses),
                    duration_seconds=result.duration_seconds,
                ),
            )
            outcome.assistant_value = new_value
        usages = tuple(self._usage_records(prepared, result.flow_usages))
        if prepared.begun:  # replace the running answer stored at the start
            answer = items[1]
            turn = self._turn(prepared, variables, usages=usages)
            changed = variables != prepared.begun_variables
            if not await self.turns.finish_turn(turn, answer, variables_changed=changed):
                log.info("chat %s was deleted while its run went on; its answer is not stored", chat_id)
        else:
            await self.turns.save_turn(
                self._turn(prepared, variables, items=items, resumed=resumed, usages=usages)
            )
        if self.api_keys is not None and request.api_key_id:
            await self.api_keys.record_use(request.api_key_id, sum(u.total_points for u in usages))

    def _usage_records(self, prepared: PreparedRun, usages: list[dict[str, Any]]) -> list[UsageRecord]:
        request = prepared.request
        return [
            UsageRecord(
                team_id=request.team_id,
                app_id=request.app_id,
                source=request.source,
                module_name=str(usage.get("moduleName") or ""),
                model=str(usage.get("model") or ""),
                input_tokens=int(usage.get("inputTokens") or 0),
                output_tokens=int(usage.get("outputTokens") or 0),
                total_points=float(usage.get("totalPoints") or 0),
                api_key_id=request.api_key_id,
            )
            for usage in usages
        ]

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self.heartbeat.aclose()
        await self.services.aclose()
        if self.fanout is not None:
            await self.fanout.aclose()
