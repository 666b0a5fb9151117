"""Projections of a run's frames: which SSE frames a client sees (``detail``, API version) and the
non-stream response body (spec §7.2). Both read the same frames, so they cannot disagree."""

from __future__ import annotations

from typing import Any

from fathom.chat.channel import Frame
from fathom.chat.cite import remove_dataset_cite_text
from fathom.chat.run_state import ChatOutcome
from fathom.chat.secret_variables import without_password_variables

ANSWER_EVENTS = frozenset({"answer", "fastAnswer"})
PLACEHOLDER_USAGE = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 1}


def frame_visible(frame: Frame, *, detail: bool, api_version: int) -> bool:
    """Whether a frame goes to this client: detail=false sends only answers (and errors); v1 sends
    the trailing ``flowResponses`` but no ``flowNodeResponse``, v2 the reverse."""
    if frame.event == "error":
        return True
    if not detail:
        return frame.event in ANSWER_EVENTS
    if frame.event == "flowResponses":
        return api_version == 1
    if frame.event == "flowNodeResponse":
        return api_version != 1
    return True


def _without_cites(value: dict[str, Any], retain: bool) -> dict[str, Any]:
    text = value.get("text")
    if value.get("type") != "text" or not isinstance(text, dict) or not isinstance(text.get("content"), str):
        return value
    return {**value, "text": {**text, "content": remove_dataset_cite_text(text["content"], retain)}}


def _response_content(outcome: ChatOutcome, *, detail: bool, retain_dataset_cite: bool = True) -> Any:
    """``choices[0].message.content``: the streamed text; with detail and several or non-text values,
    the raw value array (FastGPT's shape). Citation markers removed unless ``retain_dataset_cite``.
    Hidden values (``hideInUI``: a context checkpoint, a stop-gate feedback) are stored, never shown."""
    values = [
        v
        for v in (outcome.result.assistant_responses if outcome.result else [])
        if not (v.get("hideInUI") or v.get("hidden"))
    ]
    non_empty = [v for v in values if v.get("type") != "text" or (v.get("text") or {}).get("content")]
    if detail and (len(non_empty) > 1 or any(v.get("type") != "text" for v in non_empty)):
        return [_without_cites(v, retain_dataset_cite) for v in non_empty]
    return remove_dataset_cite_text(outcome.text, retain_dataset_cite)


def still_indexing(flow_responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The knowledge bases still indexing that the run's searches read (``datasetIndexing`` of each
    knowledge-base search node's response), once each."""
    seen: dict[str, dict[str, Any]] = {}
    for response in flow_responses:
        for item in response.get("datasetIndexing") or []:
            if isinstance(item, dict):
                seen.setdefault(str(item.get("datasetId")), item)
    return list(seen.values())


def completion_response(
    outcome: ChatOutcome, *, detail: bool, api_version: int, retain_dataset_cite: bool = True
) -> dict[str, Any]:
    """The non-stream body: ``{id, model, usage, choices, error?, responseData?, newVariables?}``."""
    prepared = outcome.prepared
    result = outcome.result
    body: dict[str, Any] = {}
    if detail and result is not None:
        body["responseData"] = result.flow_responses
        indexing = still_indexing(result.flow_responses)
        if indexing:  # Fathom's notice: an answer from knowledge bases still indexing may miss passages
            body["datasetIndexing"] = indexing
        body["newVariables"] = without_password_variables(
            {**prepared.variables, **result.new_variables}, prepared.graph.chat_config
        )
    # v1 answers the chat id (generated when none was sent); v2 only the one that was sent.
    chat_id = prepared.chat_id if api_version == 1 or prepared.chat_id_given else ""
    body.update(
        {
            "id": chat_id,
            "model": "",
            "usage": dict(PLACEHOLDER_USAGE),
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": _response_content(
                            outcome, detail=detail, retain_dataset_cite=retain_dataset_cite
                        ),
                    },
                    "finish_reason": "stop",
                    "index": 0,
                }
            ],
        }
    )
    if result is not None and result.error:
        body["error"] = result.error
    if outcome.question_guide is not None:  # Fathom's: the app's chatConfig.questionGuide is on
        body["questionGuide"] = outcome.question_guide
    if outcome.interactive is not None:
        body["interactive"] = {
            **outcome.interactive,
            "chatId": prepared.chat_id,
            "responseChatItemId": prepared.response_chat_item_id,
        }
    return body
