"""Every FastGPT app in ``shared/datasets/fastgpt-apps`` (FastGPT's own templates and workflow test cases,
unmodified, model ids as shipped) created through ``/api/core/app/create`` and chatted with once per
transport (stream and not, ``detail`` on and off) against the scripted model, on one live server.

The expected node sequences are what FastGPT's dispatcher runs for these graphs (read from
``packages/service/core/workflow/dispatch``), not Fathom's own output:

- ``classifyQuestion`` falls back to the *last* class when the model's answer names none;
- an HTTP node that cannot reach its host sets its ``error`` output and the run goes on (no
  ``catchError`` on these old nodes), and a code node that ``JSON.parse``s the error text then fails
  exactly as it does in FastGPT;
- ``datasetSearchNode`` with no knowledge base selected is FastGPT's node error "Select dataset empty"
  (the templates ship with an empty selection: a FastGPT user picks one first); the same apps with a
  knowledge base filled in are run below;
- a tool-call node whose model answers without calling a tool ends after that answer.

Names resolve through a static table with no public hosts, so an HTTP node fails the same way with
and without a network.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from chat_support import ChatServer, free_port, parse_sse, start_chat_server

from fathom.config import Settings
from fathom.security.egress.resolver import StaticResolver
from fathom.testing import ScriptedOpenAIServer
from workflow_json import loop_of_searches

# copies of shared/datasets/fastgpt-apps (provenance and licence in SOURCES.txt), so a fresh clone runs them
APPS_DIR = Path(__file__).resolve().parent / "fastgpt_apps"
REPLY = "scripted reply"
NETWORK = "Could not resolve host"
NO_DATASET = "No knowledge base selected"
LANGS = {"source_lang": "English", "target_lang": "简体中文"}

# app → (node types FastGPT runs, in order; {node type: the only error text it may carry}, variables)
EXPECTED: dict[str, tuple[list[str], dict[str, str], dict[str, Any]]] = {
    "fg-CQ": (["workflowStart", "classifyQuestion", "answerNode"], {}, {}),
    "fg-Chinese": (["workflowStart", "chatNode", "code", "answerNode"], {}, {}),
    "fg-TranslateRobot": (
        ["workflowStart", "textEditor", "chatNode", "code", "textEditor", "answerNode"],
        {},
        {},
    ),
    "fg-chatGuide": (["workflowStart", "chatNode"], {}, {}),
    "fg-flux": (
        ["pluginInput", "httpRequest468", "pluginOutput"],
        {"httpRequest468": NETWORK},
        {"绘图提示词": "a cat"},
    ),
    "fg-githubIssue": (
        ["workflowStart", "code", "answerNode", "httpRequest468", "code"],
        {"httpRequest468": NETWORK, "code": "is not valid JSON"},  # parses the HTTP node's error text
        {},
    ),
    "fg-google": (["workflowStart", "tools"], {}, {}),
    "fg-longTranslate": (
        ["workflowStart", "code", "ifElseNode", "ifElseNode", "code", "code", "datasetSearchNode"],
        {"datasetSearchNode": NO_DATASET},
        LANGS,
    ),
    "fg-plugin-dalle": (
        ["pluginInput", "httpRequest468", "pluginOutput"],
        {"httpRequest468": NETWORK},
        {"绘图提示词": "a cat"},
    ),
    "fg-simpleDatasetChat": (
        ["workflowStart", "datasetSearchNode"],
        {"datasetSearchNode": NO_DATASET},
        {},
    ),
    "fg-srt-translate": (
        [
            "workflowStart",
            "code",
            "ifElseNode",
            "code",
            "code",
            "code",
            "textEditor",
            "chatNode",
            "code",
            "code",
            "answerNode",
            "code",
            "ifElseNode",
            "answerNode",
        ],
        {},
        LANGS,
    ),
    "fgtest-loopTest": (["workflowStart", "loop"], {}, {}),
}


def app_files() -> list[Path]:
    return sorted(APPS_DIR.glob("*.json"))


def test_every_shipped_app_has_an_expectation() -> None:
    assert app_files(), f"no FastGPT apps in {APPS_DIR}"
    assert sorted(p.stem for p in app_files()) == sorted(EXPECTED)


@pytest.fixture(scope="module")
def fg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatServer]:
    with ScriptedOpenAIServer(lambda request: REPLY) as scripted:
        root = tmp_path_factory.mktemp("fastgpt-apps")
        settings = Settings(
            data_dir=root / "data",
            port=free_port(),
            workers=1,
            openai_base_url=scripted.base_url,
            chat_model="scripted-chat",
            egress_allow_cidrs=["127.0.0.1/32"],
        )
        for server in start_chat_server(settings, scripted, run_workers=True):
            server.platform.egress._resolver = StaticResolver({"localhost": ["127.0.0.1"]})
            yield server


def create_body(path: Path) -> dict[str, Any]:
    """The file as it is; FastGPT's workflow test cases carry no name or type, so those are added."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document if "name" in document else {"name": path.stem, "type": "advanced", **document}


def chat(server: ChatServer, app_id: str, variables: dict[str, Any], *, stream: bool, detail: bool) -> Any:
    body = {
        "appId": app_id,
        "stream": stream,
        "detail": detail,
        "variables": variables,
        "messages": [{"role": "user", "content": "hello world"}],
    }
    with server.client() as client:
        response = client.post("/api/v1/chat/completions", json=body, timeout=60)
    assert response.status_code == 200, response.text
    return parse_sse(response.text) if stream else response.json()


def stream_text(frames: list[Any]) -> str:
    parts = []
    for frame in frames:
        if frame.event in (None, "answer", "fastAnswer") and frame.data != "[DONE]":
            parts.append(frame.json()["choices"][0]["delta"].get("content") or "")
    return "".join(parts)


def check_nodes(name: str, nodes: list[dict[str, Any]], sequence: list[str] | None = None) -> None:
    """The node types FastGPT runs, in order; no node error but the ones expected (none when
    ``sequence`` is given)."""
    expected_sequence, allowed, _ = EXPECTED[name]
    if sequence is None:
        sequence = expected_sequence
    else:
        allowed = {}
    assert [node["moduleType"] for node in nodes] == sequence, name
    for node in nodes:
        error = node.get("error") or node.get("errorText")
        http_error = (
            (node.get("httpResult") or {}).get("error") if isinstance(node.get("httpResult"), dict) else None
        )
        for problem in (error, http_error):
            if problem:
                expected = allowed.get(node["moduleType"])
                assert expected and expected in json.dumps(problem, ensure_ascii=False), (name, node)


@pytest.mark.parametrize("path", app_files(), ids=lambda p: p.stem)
def test_fastgpt_app_creates_publishes_and_runs_like_fastgpt(fg_server: ChatServer, path: Path) -> None:
    name = path.stem
    if '"flowNodeType": "code"' in path.read_text(encoding="utf-8") and shutil.which("node") is None:
        pytest.skip("the app's JavaScript code nodes need node, which this machine lacks")
    with fg_server.client() as client:
        reply = client.post("/api/core/app/create", json=create_body(path)).json()
    assert reply["code"] == 200, reply
    app_id = reply["data"]
    variables = EXPECTED[name][2]

    detailed = chat(fg_server, app_id, variables, stream=False, detail=True)
    check_nodes(name, detailed["responseData"])
    answer = detailed["choices"][0]["message"]["content"]
    plugin = name in ("fg-flux", "fg-plugin-dalle")  # a plugin run reports its output on every transport
    if plugin:  # the plugin's output node ran and carries the HTTP node's (network) error as its value
        assert detailed["responseData"][-1]["moduleType"] == "pluginOutput", name
    elif name not in WITH_DATASET:  # those answer once a knowledge base is picked (test below)
        assert answer.strip(), name
    plain = chat(fg_server, app_id, variables, stream=False, detail=False)
    assert plugin or "responseData" not in plain
    frames = chat(fg_server, app_id, variables, stream=True, detail=True)
    flow = next(frame.json() for frame in frames if frame.event == "flowResponses")
    check_nodes(name, flow)
    plain_frames = chat(fg_server, app_id, variables, stream=True, detail=False)
    assert plugin or all(frame.event is None for frame in plain_frames)
    # the same answer on every transport (code nodes stamping the time aside)
    if name != "fg-githubIssue":
        assert plain["choices"][0]["message"]["content"] == answer, name
        assert stream_text(frames) == answer and stream_text(plain_frames) == answer, name


def with_dataset(document: dict[str, Any], dataset_id: str) -> dict[str, Any]:
    filled = copy.deepcopy(document)
    for node in filled["workflow"]["nodes"]:
        for item in node["inputs"]:
            if node["flowNodeType"] == "datasetSearchNode" and item["key"] == "datasets":
                item["value"] = [{"datasetId": dataset_id}]
    return filled


@pytest.fixture(scope="module")
def faq_dataset(fg_server: ChatServer) -> str:
    import time

    with fg_server.client() as client:
        # a FastGPT export naming an embedding model this server lacks: the default one is used
        created = client.post(
            "/api/core/dataset/create", json={"name": "FAQ", "vectorModel": "text-embedding-3-small"}
        ).json()
        dataset_id = str(created["data"])
        client.post(
            "/api/core/dataset/collection/create/text",
            json={
                "datasetId": dataset_id,
                "name": "faq",
                "text": "Refunds are paid back to the original card within five working days.",
            },
        ).raise_for_status()
        deadline = time.monotonic() + 60
        while True:
            listing = client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id})
            item = listing.json()["data"]["list"][0]
            if item["trainingAmount"] == 0:
                return dataset_id
            assert time.monotonic() < deadline and not item["hasError"], item
            time.sleep(0.1)


# the apps whose knowledge-base search ships with no knowledge base selected, and the nodes FastGPT runs
# once one is picked (fg-longTranslate: one chunk of text, so its loop ends after the first round)
WITH_DATASET: dict[str, list[str]] = {
    "fg-simpleDatasetChat": ["workflowStart", "datasetSearchNode", "chatNode"],
    "fg-longTranslate": [
        *EXPECTED["fg-longTranslate"][0],
        "chatNode",
        "code",
        "code",
        "answerNode",
        "code",
        "ifElseNode",
        "answerNode",
    ],
}


@pytest.mark.parametrize("name", sorted(WITH_DATASET))
def test_apps_shipped_without_a_knowledge_base_answer_on_every_transport_once_one_is_picked(
    fg_server: ChatServer, faq_dataset: str, name: str
) -> None:
    document = with_dataset(json.loads((APPS_DIR / f"{name}.json").read_text(encoding="utf-8")), faq_dataset)
    with fg_server.client() as client:
        reply = client.post("/api/core/app/create", json=document).json()
    assert reply["code"] == 200, reply
    variables, sequence = EXPECTED[name][2], WITH_DATASET[name]
    detailed = chat(fg_server, reply["data"], variables, stream=False, detail=True)
    check_nodes(name, detailed["responseData"], sequence)
    answer = detailed["choices"][0]["message"]["content"]
    assert answer.strip(), name
    plain = chat(fg_server, reply["data"], variables, stream=False, detail=False)
    frames = chat(fg_server, reply["data"], variables, stream=True, detail=True)
    check_nodes(name, next(f.json() for f in frames if f.event == "flowResponses"), sequence)
    plain_frames = chat(fg_server, reply["data"], variables, stream=True, detail=False)
    assert plain["choices"][0]["message"]["content"] == answer
    assert stream_text(frames) == answer and stream_text(plain_frames) == answer


def run_question(server: ChatServer, app_id: str) -> dict[str, Any]:
    body = {
        "appId": app_id,
        "detail": True,
        "messages": [{"role": "user", "content": "How are refunds paid?"}],
    }
    with server.client() as client:
        reply = client.post("/api/v1/chat/completions", json=body, timeout=60).json()
    assert "choices" in reply, reply
    return dict(reply)


def test_simple_dataset_template_with_a_knowledge_base_quotes_it(
    fg_server: ChatServer, faq_dataset: str
) -> None:
    document = with_dataset(json.loads((APPS_DIR / "fg-simpleDatasetChat.json").read_text()), faq_dataset)
    with fg_server.client() as client:
        app_id = client.post("/api/core/app/create", json=document).json()["data"]
        detail = client.get("/api/core/app/detail", params={"appId": app_id}).json()["data"]
    # a simple app stored as FastGPT modules keeps every node (and has no Fathom simpleConfig)
    assert "simpleConfig" not in detail
    assert [n["flowNodeType"] for n in detail["nodes"]] == [
        "userGuide",
        "workflowStart",
        "chatNode",
        "datasetSearchNode",
    ]
    reply = run_question(fg_server, app_id)
    nodes = reply["responseData"]
    assert [n["moduleType"] for n in nodes] == ["workflowStart", "datasetSearchNode", "chatNode"]
    assert "Refunds" in nodes[1]["quoteList"][0]["q"]
    assert nodes[2]["model"] == "scripted-chat"  # gpt-4o-mini is not here: the default chat model ran
    assert reply["choices"][0]["message"]["content"] == REPLY
    sent = fg_server.model.chat_requests[-1]["messages"]  # type: ignore[union-attr]
    assert any("five working days" in str(m["content"]) for m in sent)


def test_simple_app_form_shape_compiles_to_fastgpt_nodes(fg_server: ChatServer, faq_dataset: str) -> None:
    form = {
        "name": "Form app",
        "type": "simple",
        "aiSettings": {
            "model": "deepseek-reasoner",
            "systemPrompt": "Answer from the FAQ.",
            "maxHistories": 4,
        },
        "dataset": {"datasets": [{"datasetId": faq_dataset}], "similarity": 0, "limit": 1500},
        "selectedTools": [],
        "chatConfig": {"welcomeText": "Ask me about refunds"},
    }
    for route in ("/api/core/app/create", "/api/core/app/importWorkflow"):
        with fg_server.client() as client:
            reply = client.post(route, json=form).json()
            assert reply["code"] == 200, reply
            detail = client.get("/api/core/app/detail", params={"appId": reply["data"]}).json()["data"]
        assert detail["type"] == "simple" and detail["chatConfig"]["welcomeText"] == "Ask me about refunds"
        assert [n["flowNodeType"] for n in detail["nodes"]] == [
            "userGuide",
            "workflowStart",
            "chatNode",
            "datasetSearchNode",
        ]
        result = run_question(fg_server, reply["data"])
        assert [n["moduleType"] for n in result["responseData"]] == [
            "workflowStart",
            "datasetSearchNode",
            "chatNode",
        ]
        assert result["responseData"][2]["model"] == "scripted-chat"
        assert fg_server.model.chat_requests[-1]["messages"][0]["content"].startswith(  # type: ignore[union-attr]
            "Answer from the FAQ."
        )


def test_web_search_in_a_simple_form_is_refused_by_name(fg_server: ChatServer) -> None:
    form = {"name": "Web", "type": "simple", "aiSettings": {}, "webSearch": {"enabled": True}}
    with fg_server.client() as client:
        reply = client.post("/api/core/app/create", json=form)
    assert reply.status_code == 400 and "webSearch.enabled" in reply.json()["message"]


CHUNK_ID = "65f0a1b2c3d4e5f601234567"
CITED = f"Refunds take five days[{CHUNK_ID}](CITE). Ask again[id](CITE)【{CHUNK_ID}】(CITE)!"


@pytest.mark.parametrize("retain", [None, False, True], ids=["default", "false", "true"])
def test_retain_dataset_cite_on_both_transports(fg_server: ChatServer, retain: bool | None) -> None:
    """FastGPT's ``removeDatasetCiteText``: markers go unless ``retainDatasetCite``; the copied prompt
    placeholder ``[id](CITE)`` goes in both modes; a marker split across stream chunks goes too."""
    from fathom.testing.scripted_turns import text_turn

    model = fg_server.model
    assert model is not None
    model.set_script(lambda request: text_turn(CITED, text_chunk_chars=3))
    try:
        app_id = fg_server.create_app(create_body(APPS_DIR / "fg-chatGuide.json"))
        extra = {} if retain is None else {"retainDatasetCite": retain}
        kept = f"Refunds take five days[{CHUNK_ID}](CITE). Ask again【{CHUNK_ID}】(CITE)!"
        expected = kept if retain else "Refunds take five days. Ask again!"
        with fg_server.client() as client:
            for detail in (False, True):
                body = {"appId": app_id, "detail": detail, "messages": [{"role": "user", "content": "q"}]}
                plain = client.post("/api/v1/chat/completions", json={**body, **extra}).json()
                assert plain["choices"][0]["message"]["content"] == expected
                streamed = client.post("/api/v1/chat/completions", json={**body, **extra, "stream": True})
                assert stream_text(parse_sse(streamed.text)) == expected
    finally:
        model.set_script(lambda request: REPLY)


def test_template_picker_body_and_built_in_templates(fg_server: ChatServer) -> None:
    """FastGPT's picker sends the template's graph with its ``templateId`` (the graph wins); a body with
    only the id of a built-in template gets that template; an unknown id alone is a 400 naming it."""
    document = json.loads((APPS_DIR / "fg-CQ.json").read_text(encoding="utf-8"))
    workflow = document["workflow"]
    picker = {
        "name": document["name"],
        "avatar": document["avatar"],
        "intro": document["intro"],
        "type": document["type"],
        "modules": workflow["nodes"],
        "edges": workflow["edges"],
        "chatConfig": workflow.get("chatConfig"),
        "templateId": "CQ",
    }
    with fg_server.client() as client:
        app_id = client.post("/api/core/app/create", json=picker).json()["data"]
        listed = client.get("/api/core/app/template/list").json()["data"]
        detail = client.get("/api/core/app/template/detail", params={"templateId": "simpleChat"}).json()[
            "data"
        ]
        from_template = client.post(
            "/api/core/app/create", json={"name": "From template", "templateId": "simpleChat"}
        ).json()["data"]
        unknown = client.post("/api/core/app/create", json={"name": "x", "templateId": "nope"})
    check_nodes("fg-CQ", chat(fg_server, app_id, {}, stream=False, detail=True)["responseData"])
    assert {"simpleChat", "simpleDatasetChat"} <= {t["templateId"] for t in listed}
    assert [n["flowNodeType"] for n in detail["workflow"]["nodes"]] == [
        "userGuide",
        "workflowStart",
        "chatNode",
    ]
    reply = chat(fg_server, from_template, {}, stream=False, detail=True)
    assert reply["choices"][0]["message"]["content"] == REPLY
    assert [n["moduleType"] for n in reply["responseData"]] == ["workflowStart", "chatNode"]
    assert unknown.status_code == 400 and "templateId" in unknown.json()["message"]


def test_simple_app_form_with_tools_runs_a_tool_call_node(fg_server: ChatServer, faq_dataset: str) -> None:
    """selectedTools (here FastGPT's getTime system tool) and the knowledge base become the tools of one
    Tool Call node, as form2AppWorkflow builds it; the model calls the tool and answers."""
    from fathom.testing.scripted_turns import text_turn, tool_call_turn

    def script(request: Any) -> Any:
        messages = request.json["messages"]
        if request.json.get("tools") and not any(m["role"] == "tool" for m in messages):
            return tool_call_turn([("timeTool", {})])
        return text_turn("It is late.")

    time_tool = {
        "nodeId": "timeTool",
        "flowNodeType": "pluginModule",
        "pluginId": "community-getTime",
        "name": "获取当前时间",
        "intro": "Current date and time",
        "inputs": [],
        "outputs": [{"id": "time", "key": "time", "valueType": "string", "type": "static"}],
    }
    form = {
        "name": "Tool form",
        "type": "simple",
        "aiSettings": {"model": "gpt-4o-mini"},
        "dataset": {"datasets": [{"datasetId": faq_dataset}]},
        "selectedTools": [time_tool],
    }
    model = fg_server.model
    assert model is not None
    model.set_script(script)
    before = len(model.chat_requests)
    try:
        with fg_server.client() as client:
            app_id = client.post("/api/core/app/create", json=form).json()["data"]
            detail = client.get("/api/core/app/detail", params={"appId": app_id}).json()["data"]
        kinds = [n["flowNodeType"] for n in detail["nodes"]]
        assert kinds == ["userGuide", "workflowStart", "tools", "datasetSearchNode", "pluginModule"]
        reply = chat(fg_server, app_id, {}, stream=False, detail=True)
        names = {tool["function"]["name"] for tool in model.chat_requests[before]["tools"]}
        assert {"timeTool", "iKBoX2vIzETU"} <= names
    finally:
        model.set_script(lambda request: REPLY)
    values = reply["choices"][0]["message"]["content"]  # detail: the value list (a tool call, then text)
    texts = [v["text"]["content"] for v in values if v.get("type") == "text"]
    assert texts[-1].endswith("It is late.") and any(v.get("type") == "tool" for v in values)
    tool_node = next(n for n in reply["responseData"] if n["moduleType"] == "tools")
    ran = [d["moduleType"] for d in tool_node.get("toolDetail") or []]
    assert "pluginModule" in ran, tool_node


@pytest.mark.parametrize("path", app_files(), ids=lambda p: p.stem)
def test_fastgpt_app_passes_the_workflow_checks_and_publishes(fg_server: ChatServer, path: Path) -> None:
    """FastGPT's own apps are sound: the checks before publishing refuse none of them (an empty knowledge
    base selection, a model this server lacks, an unused loop end are warnings, not errors)."""
    with fg_server.client() as client:
        created = client.post("/api/core/app/create", json=create_body(path))
        assert created.status_code == 200, created.text
        app_id = created.json()["data"]
        saved = client.post("/api/core/app/update", json={"appId": app_id, "name": path.stem})
        published = client.post("/api/core/app/version/publish", json={"appId": app_id})
    assert published.status_code == 200, published.text
    for reply in (saved, published):
        assert all(p["level"] == "warning" for p in reply.json()["data"]["problems"]), reply.text


def test_an_answers_quote_list_holds_the_searches_inside_a_loop(
    fg_server: ChatServer, faq_dataset: str
) -> None:
    """FastGPT's ``totalQuoteList`` flattens the runs inside nodes (a loop's ``loopDetail``, a child
    app's ``pluginDetail``, a tool call's ``toolDetail``) for their search nodes' quotes."""
    with fg_server.client() as client:
        reply = client.post("/api/core/app/create", json=loop_of_searches(faq_dataset)).json()
        assert reply["code"] == 200, reply
        body = {
            "appId": reply["data"],
            "chatId": "loop-of-searches",
            "detail": True,
            "variables": {"list": ["How are refunds paid?", "When do refunds arrive?"]},
            "messages": [{"role": "user", "content": "hello"}],
        }
        nodes = client.post("/api/v1/chat/completions", json=body, timeout=60).json()["responseData"]
        assert [n["moduleType"] for n in nodes] == ["workflowStart", "loop"]
        searches = [n for n in nodes[1]["loopDetail"] if n["moduleType"] == "datasetSearchNode"]
        assert len(searches) == 2 and all(s["quoteList"] for s in searches), searches
        page = {"appId": reply["data"], "chatId": "loop-of-searches", "offset": 0, "pageSize": 10}
        records = client.post("/api/core/chat/getPaginationRecords", json=page).json()["data"]["list"]
    answer = next(r for r in records if r["obj"] == "AI")
    assert [q["id"] for q in answer["totalQuoteList"]] == [q["id"] for s in searches for q in s["quoteList"]]
    assert "Refunds" in answer["totalQuoteList"][0]["q"]


def test_a_share_link_hiding_raw_sources_hides_them_inside_a_loop_too(
    fg_server: ChatServer, faq_dataset: str
) -> None:
    """``showRawSource`` false: a visitor's quotes lose ``sourceId`` / ``collectionId`` / ``datasetId``
    in the searches a loop ran as well, in the answer's node responses and in its stored record."""
    with fg_server.client() as client:
        app_id = client.post("/api/core/app/create", json=loop_of_searches(faq_dataset)).json()["data"]
        link = {
            "appId": app_id,
            "type": "share",
            "name": "Site",
            "responseDetail": True,
            "showRawSource": False,
        }
        share_id = client.post("/api/support/outLink/create", json=link).json()["data"]
    body = {
        "shareId": share_id,
        "outLinkUid": "visitor-loop",
        "chatId": "visitor-loop-chat",
        "detail": True,
        "variables": {"list": ["How are refunds paid?"]},
        "messages": [{"role": "user", "content": "hello"}],
    }
    with httpx.Client(base_url=fg_server.base_url, timeout=60) as visitor:
        nodes = visitor.post("/api/v1/chat/completions", json=body).json()["responseData"]
        page = {"shareId": share_id, "outLinkUid": "visitor-loop", "chatId": "visitor-loop-chat"}
        records = visitor.post("/api/core/chat/getPaginationRecords", json=page).json()["data"]["list"]
    (search,) = [n for n in nodes[1]["loopDetail"] if n["moduleType"] == "datasetSearchNode"]
    (quote,) = next(r for r in records if r["obj"] == "AI")["totalQuoteList"]
    for shown in (search["quoteList"][0], quote):
        assert "Refunds" in shown["q"] and shown["sourceName"]
        assert not {"sourceId", "collectionId", "datasetId"} & set(shown), shown


@pytest.mark.parametrize(("name", "llm_modules"), [("fg-CQ", 0), ("fg-Chinese", 1)])
def test_a_records_llm_module_count_is_fastgpts(fg_server: ChatServer, name: str, llm_modules: int) -> None:
    """FastGPT counts the AI chat and tool-call nodes (``isLLMNode``), not every node naming a model: a
    question classifier is not one; ``historyPreviewLength`` is the first one's preview length."""
    with fg_server.client() as client:
        app_id = client.post("/api/core/app/create", json=create_body(APPS_DIR / f"{name}.json")).json()[
            "data"
        ]
        body = {
            "appId": app_id,
            "chatId": f"count-{name}",
            "detail": True,
            "messages": [{"role": "user", "content": "hi"}],
        }
        nodes = client.post("/api/v1/chat/completions", json=body, timeout=60).json()["responseData"]
        page = {"appId": app_id, "chatId": f"count-{name}", "offset": 0, "pageSize": 10}
        records = client.post("/api/core/chat/getPaginationRecords", json=page).json()["data"]["list"]
    answer = next(r for r in records if r["obj"] == "AI")
    chat_nodes = [n for n in nodes if n["moduleType"] == "chatNode"]
    assert answer["llmModuleAccount"] == llm_modules == len(chat_nodes)
    assert answer["historyPreviewLength"] == (len(chat_nodes[0]["historyPreview"]) if chat_nodes else 0)


HANDBOOK = [
    "Refunds are paid back to the original card within five working days.",
    "Refunds for gift cards are paid as store credit.",
    "A refund is paid only after the returned item arrives at the warehouse.",
    "Shipping within the country takes two to four working days.",
    "Express shipping is paid at checkout and arrives the next working day.",
    "Refunds of shipping costs are paid when the item arrived damaged.",
    "The warranty covers manufacturing faults for two years.",
    "Paid subscriptions renew every month until they are cancelled.",
    "Invoices are sent by email once the order is paid.",
    "Refunds cannot be paid in cash at the store.",
    "Customer service answers calls on working days from nine to five.",
    "Returned items must be unused and in their original packaging.",
    "Refunds are paid back to the original card, within five working days!",  # the first one's text again
]


def _search_wire(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a quote's ranking is: id, text, scores, and each trace stage with its score and rank."""
    return [
        (
            item["id"],
            item["q"],
            [(s["type"], s["value"], s["index"]) for s in item["score"]],
            [(e["stage"], e.get("score"), e.get("rank"), e.get("detail")) for e in item["trace"]["stages"]],
        )
        for item in items
    ]


def test_a_chats_search_node_quotes_what_the_search_test_keeps_when_the_budget_cuts(
    fg_server: ChatServer,
) -> None:
    """The search a chat's search node runs stops at its token budget (it makes no fused item past the one
    crossing it); the search test's keeps every removed item. Through the product both must keep the same
    quotes with the same scores and traces, and the model must be sent those quotes."""
    import time

    with fg_server.client() as client:
        dataset_id = str(client.post("/api/core/dataset/create", json={"name": "Handbook"}).json()["data"])
        for index, paragraph in enumerate(HANDBOOK):
            reply = client.post(
                "/api/core/dataset/collection/create/text",
                json={"datasetId": dataset_id, "name": f"page-{index}", "text": paragraph},
            ).json()
            assert reply["code"] == 200, reply
        deadline = time.monotonic() + 90
        while True:
            listing = client.post(
                "/api/core/dataset/collection/listV2", json={"datasetId": dataset_id, "pageSize": 50}
            ).json()["data"]["list"]
            if len(listing) == len(HANDBOOK) and all(c["trainingAmount"] == 0 for c in listing):
                break
            assert time.monotonic() < deadline and not any(c["hasError"] for c in listing), listing
            time.sleep(0.1)
        question, limit = "How are refunds paid?", 60
        tested = client.post(
            "/api/core/dataset/searchTest",
            json={"datasetId": dataset_id, "text": question, "searchMode": "mixedRecall", "limit": limit},
        ).json()["data"]
        # the copy of the first paragraph is a duplicate, and the budget cut
        assert {item["trace"]["cutBy"] for item in tested["cutList"]} == {"dedupe", "tokenBudget"}

        document = with_dataset(json.loads((APPS_DIR / "fg-simpleDatasetChat.json").read_text()), dataset_id)
        settings = {"searchMode": "mixedRecall", "limit": limit, "similarity": 0}
        settings["datasetSearchUsingExtensionQuery"] = False
        for node in document["workflow"]["nodes"]:
            if node["flowNodeType"] == "datasetSearchNode":
                for item in node["inputs"]:
                    item["value"] = settings.get(item["key"], item.get("value"))
        app_id = client.post("/api/core/app/create", json=document).json()["data"]
    body = {"appId": app_id, "detail": True, "messages": [{"role": "user", "content": question}]}
    with fg_server.client() as client:
        reply = client.post("/api/v1/chat/completions", json=body, timeout=60).json()
    search = next(n for n in reply["responseData"] if n["moduleType"] == "datasetSearchNode")
    assert search["searchMode"] == "mixedRecall" and search["limit"] == limit
    assert _search_wire(search["quoteList"]) == _search_wire(tested["list"])
    assert 1 < len(search["quoteList"]) < len(HANDBOOK)
    assert len({quote["q"] for quote in search["quoteList"]}) == len(search["quoteList"])  # deduplicated
    sent = str(fg_server.model.chat_requests[-1]["messages"])  # type: ignore[union-attr]
    assert all(quote["q"] in sent for quote in search["quoteList"])
