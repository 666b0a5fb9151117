"""Suggested next questions (FastGPT's question guide, ``createQuestionGuide``): the last turns of a
chat, FastGPT's prompt, and three short questions parsed from the model's answer.

FastGPT's chat page asks for them after each answer when the app's ``chatConfig.questionGuide`` is on
(its completions stream carries nothing for them). Fathom also makes them at the end of each run of such
an app (:func:`guide_after_run`): a detailed stream carries them as its own ``questionGuide`` event
before ``[DONE]``, a non-stream answer as a ``questionGuide`` field; its console reads that event."""

from __future__ import annotations

import ast
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fathom.chat.apps import draft_workflow
from fathom.chat.errors import ChatError
from fathom.chat.run_state import ChatOutcome
from fathom.llm.errors import ModelRequestError
from fathom.store.protocols import AppRecord, UsageRecord, UsageRepository

if TYPE_CHECKING:
    from fathom.chat.apps import AppService
    from fathom.chat.history import HistoryService
    from fathom.chat.ownership import ChatCaller

log = logging.getLogger(__name__)

#: FastGPT's ``QuestionGuidePrompt`` (packages/global/core/ai/prompt/agent.ts)
QUESTION_GUIDE_PROMPT = (
    "You are an AI assistant tasked with predicting the user's next question based on the conversation "
    "history. Your goal is to generate 3 potential questions that will guide the user to continue the "
    "conversation. When generating these questions, adhere to the following rules:\n\n"
    "1. Use the same language as the user's last question in the conversation history.\n"
    "2. Keep each question under 20 characters in length.\n\n"
    "Analyze the conversation history provided to you and use it as context to generate relevant and "
    "engaging follow-up questions. Your predictions should be logical extensions of the current topic or "
    "related areas that the user might be interested in exploring further.\n\n"
    "Remember to maintain consistency in tone and style with the existing conversation while providing "
    "diverse options for the user to choose from. Your goal is to keep the conversation flowing naturally "
    "and help the user delve deeper into the subject matter or explore related topics."
)
#: FastGPT's ``QuestionGuideFooterPrompt``
QUESTION_GUIDE_FOOTER = (
    "Please strictly follow the format rules: \nReturn questions in JSON format: "
    "['Question 1', 'Question 2', 'Question 3']. Your output: "
)
HISTORY_ITEMS = 6  # FastGPT reads the chat's last 6 items
_ROLES = {"Human": "user", "AI": "assistant", "System": "system"}


@dataclass(frozen=True)
class QuestionGuideConfig:
    open: bool
    model: str = ""
    custom_prompt: str = ""


@dataclass(frozen=True)
class QuestionGuide:
    questions: list[str]
    model: str
    input_tokens: int
    output_tokens: int
    points: float = 0.0  # what the call cost, by the model's prices

    def usage(self, team_id: str, app_id: str | None, source: str, api_key_id: str | None) -> UsageRecord:
        """The usage record of the call (module ``Question Guide``)."""
        return UsageRecord(
            team_id=team_id,
            app_id=app_id,
            source=source,
            module_name="Question Guide",
            model=self.model,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            total_points=self.points,
            api_key_id=api_key_id,
        )


def _question_guide_config(value: Any) -> QuestionGuideConfig:
    """``chatConfig.questionGuide`` (or a request's ``questionGuide``): FastGPT's older boolean or its
    ``{open, model?, customPrompt?}``."""
    if isinstance(value, dict):
        return QuestionGuideConfig(
            open=bool(value.get("open")),
            model=str(value.get("model") or ""),
            custom_prompt=str(value.get("customPrompt") or ""),
        )
    return QuestionGuideConfig(open=bool(value))


def _text(value: Sequence[Any]) -> str:
    parts = []
    for part in value:
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            parts.append(str(text.get("content") if isinstance(text, dict) else text or ""))
    return "\n".join(part for part in parts if part)


def _app_chat_model(workflow: Mapping[str, Any]) -> str:
    """The first chat model the app's nodes name ("" when none)."""
    for node in workflow.get("nodes") or []:
        for item in node.get("inputs") or []:
            if item.get("key") == "model" and isinstance(item.get("value"), str) and item["value"]:
                return str(item["value"])
    return ""


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _history_messages(items: Sequence[Any]) -> list[dict[str, str]]:
    """Chat items (records or FastGPT's dicts: ``obj``, ``value``) as model messages, their text only,
    oldest first."""
    messages = []
    for item in items:
        role = _ROLES.get(str(_field(item, "obj") or ""))
        text = _text(_field(item, "value") or [])
        if role and text:
            messages.append({"role": role, "content": text})
    return messages


def _parse_questions(answer: str) -> list[str]:
    """The list between the answer's first ``[`` and last ``]`` (JSON, or the single-quoted form FastGPT's
    prompt shows); ``[]`` when there is none."""
    start, end = answer.find("["), answer.rfind("]")
    if start == -1 or end < start:
        return []
    text = answer[start : end + 1].replace("\\n", "").replace("\\", "")
    for reader in (json.loads, ast.literal_eval):
        try:
            value = reader(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, list):
            return [str(item).strip() for item in value if str(item).strip()]
    log.warning("question guide answer without a readable list: %.200s", answer)
    return []


async def _create_question_guide(
    model: Any, messages: Sequence[dict[str, str]], *, custom_prompt: str = ""
) -> QuestionGuide:
    """Ask ``model`` (``complete(messages)`` → ``content``, ``usage``) for the next questions."""
    prompt = f"{custom_prompt or QUESTION_GUIDE_PROMPT}\n{QUESTION_GUIDE_FOOTER}"
    result = await model.complete([*messages, {"role": "user", "content": prompt}])
    usage = getattr(result, "usage", None)
    config = getattr(model, "config", None)
    input_tokens = int(getattr(usage, "input_tokens", 0) or 0)
    output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
    price = getattr(config, "price", None)
    return QuestionGuide(
        questions=_parse_questions(str(getattr(result, "content", "") or "")),
        model=str(getattr(config, "id", "") or getattr(model, "model_id", "") or ""),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        points=float(price(input_tokens, output_tokens)) if callable(price) else 0.0,
    )


async def _guide_after_answer(
    models: Any,
    chat_config: Mapping[str, Any],
    workflow: Callable[[], Mapping[str, Any]],
    histories: Sequence[Any],
    query: Any,
    answer: str,
) -> QuestionGuide | None:
    """The next questions after a run's answer when the app's ``chatConfig.questionGuide`` is on (None
    when it is off). ``models.chat_model(id)`` gives the model: the guide's own, else the app's chat model
    (``workflow()``'s, read only then), else the default. The answer is given already: a failing model is
    logged and gives None, never an error for the answer."""
    config = _question_guide_config(chat_config.get("questionGuide"))
    if not config.open:
        return None
    items = [
        *histories,
        {"obj": "Human", "value": query},
        {"obj": "AI", "value": [{"type": "text", "text": {"content": answer}}]},
    ]
    messages = _history_messages(items[-HISTORY_ITEMS:])
    try:
        model = models.chat_model(config.model or _app_chat_model(workflow()))
        return await _create_question_guide(model, messages, custom_prompt=config.custom_prompt)
    except Exception as exc:  # noqa: BLE001 - whatever the model did, the answer stands without questions
        log.warning("question guide after the answer left out: %s", exc)
        return None


async def guide_after_run(models: Any, usage: UsageRepository, outcome: ChatOutcome) -> list[str] | None:
    """:func:`_guide_after_answer` for a run that answered (not one paused for the user), its usage
    recorded as the run's: the questions, or None. A plain stream (``detail=false``: OpenAI chunks only)
    has no place for them, so none are made for it."""
    prepared = outcome.prepared
    request = prepared.request
    if outcome.interactive is not None or (request.stream and not prepared.detail):
        return None
    graph = prepared.graph  # its chat settings only: a chat without the guide decodes no workflow
    guide = await _guide_after_answer(
        models, graph.chat_config, lambda: graph.workflow, prepared.histories, prepared.query, outcome.text
    )
    if guide is None:
        return None
    try:
        await usage.record(guide.usage(request.team_id, request.app_id, request.source, request.api_key_id))
    except Exception:  # noqa: BLE001 - the answer stands; the lost record is logged with its cause
        log.exception("question guide usage of app %s not recorded", request.app_id)
    return guide.questions


class QuestionGuideService:
    """Suggested next questions for a chat (its last items) or for given messages; the model's tokens are
    recorded as usage (module ``Question Guide``) of the app, or of no app."""

    def __init__(
        self,
        apps: AppService,
        history: HistoryService,
        usage: UsageRepository,
        chat_model: Callable[[str], Any],
    ) -> None:
        self._apps = apps
        self._history = history
        self._usage = usage
        self._chat_model = chat_model

    async def for_chat(
        self,
        app: AppRecord,
        chat_id: str,
        caller: ChatCaller,
        setting: dict[str, Any] | None,
        *,
        api_key_id: str | None,
    ) -> list[str]:
        """The chat's last :data:`HISTORY_ITEMS` items (none when the caller may not read the chat). The
        model is ``setting``'s (else the app's ``chatConfig.questionGuide``), else the app's chat model,
        else the default one."""
        try:
            workflow = (await self._apps.run_graph(app.team_id, app.id, app=app)).workflow
        except ChatError:
            workflow = draft_workflow(app)
        config = _question_guide_config(
            setting if setting is not None else (workflow.get("chatConfig") or {}).get("questionGuide")
        )
        items, _ = await self._history.records(
            app.team_id, app.id, chat_id, caller, offset=0, limit=HISTORY_ITEMS
        )
        messages = _history_messages(items)
        if not messages:
            return []
        model_id = config.model or _app_chat_model(workflow)
        guide = await self._guide(messages, model_id, config.custom_prompt)
        await self._record(app.team_id, app.id, api_key_id, guide)
        return guide.questions

    async def for_messages(
        self, team_id: str, messages: list[dict[str, str]], *, api_key_id: str | None
    ) -> list[str]:
        """FastGPT's older form: the questions for ``messages`` on the default model."""
        guide = await self._guide(messages, "", "")
        await self._record(team_id, None, api_key_id, guide)
        return guide.questions

    async def _guide(
        self, messages: list[dict[str, str]], model_id: str, custom_prompt: str
    ) -> QuestionGuide:
        try:
            model = self._chat_model(model_id)
        except (LookupError, RuntimeError) as exc:
            raise ChatError(
                f"questionGuide.model: {exc}", http_status=400, status_text="invalidParams"
            ) from None
        try:
            return await _create_question_guide(model, messages, custom_prompt=custom_prompt)
        except ModelRequestError as exc:
            raise ChatError(
                f"question guide: the model {model_id or 'default'} failed: {exc}", http_status=502
            ) from None

    async def _record(
        self, team_id: str, app_id: str | None, api_key_id: str | None, guide: QuestionGuide
    ) -> None:
        await self._usage.record(guide.usage(team_id, app_id, "api" if api_key_id else "online", api_key_id))
