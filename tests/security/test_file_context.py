"""Workflow file contexts (spec §6.5): registration, ownership, signed previews, child derivation."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom.security.files import (
    ChatKeyOwnerLookup,
    FileScope,
    FileUrlWhitelist,
    PreviewUrlError,
    PreviewUrlSigner,
    WorkflowFileError,
    WorkflowFileStore,
    current_workflow_files,
    prepare_workflow_file_context,
    run_with_derived_workflow_file_context,
    set_workflow_files,
)
from fathom.security.files.derive import _derive_workflow_files

SECRET = "file-context-test-secret-0123456789"
SCOPE = FileScope("app", "app1", "user1", "chat1")
OWN_KEY = "chat/app/app1/user1/chat1/report.pdf"
OWN_KEY_2 = "chat/app/app1/user1/chat1/img.png"
OTHER_CHAT_KEY = "chat/app/app1/user1/chatX/secret.pdf"
OTHER_USER_KEY = "chat/app/app1/user2/chat1/secret.pdf"


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def signer() -> PreviewUrlSigner:
    return PreviewUrlSigner(SECRET, "https://fathom.example", clock=Clock())


def qfile(**file: Any) -> dict[str, Any]:
    return {"type": "file", "file": {"type": "file", **file}}


def human(*values: dict[str, Any]) -> dict[str, Any]:
    return {"obj": "Human", "value": list(values)}


async def prepare(
    signer: PreviewUrlSigner, query: list[Any], histories: list[Any] | None = None, **kw: Any
) -> Any:
    return await prepare_workflow_file_context(
        query=query,
        histories=histories or [],
        scope=SCOPE,
        max_file_amount=kw.pop("max_file_amount", 10),
        get_preview_url=signer,
        **kw,
    )


async def test_private_query_file_becomes_a_signed_preview_url(signer: PreviewUrlSigner) -> None:
    query = [qfile(key=OWN_KEY, name="report.pdf", url="")]
    prepared = await prepare(signer, query)
    url = prepared.query[0]["file"]["url"]
    assert url.startswith("https://fathom.example/api/files/preview?key=")
    assert signer.verify(url) == OWN_KEY
    assert prepared.file_context.get_identity(url) == f"chat:{OWN_KEY}"
    assert query[0]["file"]["url"] == ""  # the caller's data is untouched
    source = prepared.file_context.get_source(url)
    assert (source.kind, source.object_key) == ("internal", OWN_KEY)


@pytest.mark.parametrize(
    "key", [OTHER_CHAT_KEY, OTHER_USER_KEY, "chat/app/app2/user1/chat1/x.pdf", "not-a-chat-key"]
)
async def test_private_query_file_of_another_scope_is_refused(signer: PreviewUrlSigner, key: str) -> None:
    with pytest.raises(
        WorkflowFileError, match="^Workflow file key does not belong to the current workflow$"
    ):
        await prepare(signer, [qfile(key=key)])


async def test_unauthorised_and_invalid_history_files_are_skipped(signer: PreviewUrlSigner) -> None:
    histories = [
        human({"file": {"type": "file", "key": OTHER_CHAT_KEY}}, {"text": {"content": "hi"}}),
        human({"file": {"type": "file", "url": "ftp://x/y"}}, {"file": {"type": "file", "key": OWN_KEY}}),
        {"obj": "AI", "value": [{"text": {"content": "ok"}}]},
    ]
    prepared = await prepare(signer, [], histories)
    assert prepared.histories[0]["value"] == [{"text": {"content": "hi"}}]
    assert len(prepared.histories[1]["value"]) == 1
    assert signer.verify(prepared.histories[1]["value"][0]["file"]["url"]) == OWN_KEY
    assert prepared.histories[2] == histories[2]


async def test_text_history_items_come_back_as_copies_the_run_may_change(signer: PreviewUrlSigner) -> None:
    histories = [
        {"dataId": "h1", "obj": "Human", "value": [{"type": "text", "text": {"content": "hi"}}]},
        {"dataId": "a1", "obj": "AI", "value": [{"type": "text", "text": {"content": "hello"}}]},
        {"obj": "AI", "value": [{"type": "text", "text": {"content": "a"}, "extra": {"k": 1}}]},
    ]
    before = copy.deepcopy(histories)
    prepared = await prepare(signer, [], histories)
    assert prepared.histories == before
    for item in prepared.histories:
        item["value"][0]["text"]["content"] = "changed by the run"
        item["value"].append({"type": "text", "text": {"content": "more"}})
    assert histories == before


@pytest.mark.parametrize(
    "url", ["/relative/a.pdf", "//host/a.pdf", "ftp://host/a.pdf", "javascript:alert(1)", ""]
)
async def test_invalid_external_query_file_url_is_refused(signer: PreviewUrlSigner, url: str) -> None:
    with pytest.raises(WorkflowFileError, match="^Invalid workflow file URL$"):
        await prepare(signer, [qfile(url=url)])


async def test_whitelist_applies_to_external_files(signer: PreviewUrlSigner) -> None:
    whitelist = FileUrlWhitelist(["files.example.com"])
    await prepare(signer, [qfile(url="https://files.example.com/a.pdf")], validate_url_domain=whitelist)
    with pytest.raises(WorkflowFileError, match="^Invalid workflow file URL$"):
        await prepare(signer, [qfile(url="https://evil.example.com/a.pdf")], validate_url_domain=whitelist)
    assert FileUrlWhitelist([])("https://anything/x")


async def test_other_registration_sources_name_themselves(signer: PreviewUrlSigner) -> None:
    prepared = await prepare(signer, [])
    with pytest.raises(WorkflowFileError, match="^Invalid workflow variable file URL$"):
        await prepared.registrar.register_input_file({"url": "nope"}, "variable")


async def test_external_identity_drops_the_fragment_and_duplicates_collapse(signer: PreviewUrlSigner) -> None:
    query = [qfile(url="https://x.example/a.pdf#page=2"), qfile(url="https://x.example/a.pdf")]
    prepared = await prepare(signer, query)
    ctx = prepared.file_context
    assert ctx.get_identity("https://x.example/a.pdf#page=2") == "external:https://x.example/a.pdf"
    assert ctx.resolve("https://x.example/a.pdf") is ctx.resolve("https://x.example/a.pdf#page=2")
    assert len(ctx.refs) == 1


async def test_preview_urls_are_signed_once_per_key(signer: PreviewUrlSigner) -> None:
    calls: list[str] = []

    async def counting(key: str) -> str:
        calls.append(key)
        return signer.sign(key)

    histories = [human({"file": {"key": OWN_KEY}}), human({"file": {"key": OWN_KEY}})]
    prepared = await prepare_workflow_file_context(
        query=[qfile(key=OWN_KEY)],
        histories=histories,
        scope=SCOPE,
        max_file_amount=5,
        get_preview_url=counting,
    )
    assert calls == [OWN_KEY]
    assert len(prepared.file_context.refs) == 1


async def test_reading_an_unregistered_url_is_refused(signer: PreviewUrlSigner) -> None:
    prepared = await prepare(signer, [qfile(url="https://x.example/a.pdf")])
    with pytest.raises(WorkflowFileError, match="^Workflow file is not registered in the current context$"):
        prepared.file_context.get_source("https://x.example/other.pdf")


def test_preview_url_expires_and_rejects_tampering() -> None:
    clock = Clock()
    signer = PreviewUrlSigner(SECRET, "https://f.example", clock=clock, expires_seconds=7200)
    url = signer.sign(OWN_KEY)
    assert signer.verify(url) == OWN_KEY
    forged = url.replace("report.pdf", "other.pdf")
    with pytest.raises(PreviewUrlError, match="signature is invalid"):
        signer.verify(forged)
    extended = url.replace(f"expires={int(clock.now) + 7200}", f"expires={int(clock.now) + 99999}")
    with pytest.raises(PreviewUrlError, match="signature is invalid"):
        signer.verify(extended)
    with pytest.raises(PreviewUrlError, match="signature is invalid"):
        PreviewUrlSigner("another-secret-key-0123456789", "https://f.example", clock=clock).verify(url)
    with pytest.raises(PreviewUrlError, match="malformed"):
        signer.verify("https://f.example/api/files/preview?key=x")
    clock.now += 7201
    with pytest.raises(PreviewUrlError, match="expired"):
        signer.verify(url)


@given(st.text(min_size=1, max_size=60))
def test_preview_url_round_trips_any_key(key: str) -> None:
    signer = PreviewUrlSigner(SECRET, "https://f.example", clock=Clock())
    assert signer.verify(signer.sign(key)) == key


def test_legacy_key_layout_is_an_app_key() -> None:
    lookup = ChatKeyOwnerLookup()
    assert lookup.parse("chat/app1/user1/chat1/a.pdf") == SCOPE
    assert lookup.parse(OWN_KEY) == SCOPE
    assert lookup.parse("chat/app/app1/user1/chat1/") is None
    assert lookup.parse("chat/app/app1/../chat1/a.pdf") is None


# -- child derivation -------------------------------------------------------------------------------


async def _parent(signer: PreviewUrlSigner, max_files: int) -> tuple[WorkflowFileStore, Any]:
    query = [qfile(key=OWN_KEY, name="q.pdf"), {"type": "text", "text": {"content": "question"}}]
    histories = [
        human({"file": {"type": "file", "url": "https://h.example/old.pdf"}}),
        {"obj": "AI", "value": [{"text": {"content": "answer"}}]},
        human({"file": {"type": "file", "url": "https://h.example/new.pdf"}}, {"text": {"content": "t"}}),
    ]
    prepared = await prepare(signer, query, histories, max_file_amount=max_files)
    return WorkflowFileStore(prepared.file_context, prepared.registrar), prepared


async def test_child_selection_priority_query_then_variables_then_newest_history(
    signer: PreviewUrlSigner,
) -> None:
    store, prepared = await _parent(signer, max_files=3)
    variable_file = "https://v.example/var.pdf"
    derived = _derive_workflow_files(
        store, files=[variable_file], query=prepared.query, histories=prepared.histories
    )
    assert derived.query == prepared.query  # the query file fits
    assert derived.filter_files([variable_file, "https://unselected.example/z.pdf"]) == [variable_file]
    old_values = derived.histories[0]["value"]
    new_values = derived.histories[2]["value"]
    assert old_values == []  # the oldest history file lost to the quota and was removed
    assert [v.get("file", {}).get("url") for v in new_values] == ["https://h.example/new.pdf", None]
    assert [h["obj"] for h in derived.histories] == ["Human", "AI", "Human"]  # order preserved
    assert derived.resolve_input_file({"url": "https://h.example/old.pdf"}) is None  # quota-rejected
    with pytest.raises(WorkflowFileError, match="^Child workflow file is not selected in its file context$"):
        derived.resolve_input_file({"url": "https://never.example/x.pdf"})
    assert derived.file_context is not None and len(derived.file_context.refs) == 3


async def test_child_quota_of_one_keeps_only_the_query_file(signer: PreviewUrlSigner) -> None:
    store, prepared = await _parent(signer, max_files=1)
    derived = _derive_workflow_files(store, files=["https://v.example/var.pdf"], query=prepared.query,
                                    histories=prepared.histories)  # fmt: skip
    assert derived.filter_files(["https://v.example/var.pdf"]) == []
    assert all("file" not in v for h in derived.histories for v in h["value"])
    assert derived.query[0]["file"]["url"] == prepared.query[0]["file"]["url"]


async def test_child_inputs_are_deep_copies(signer: PreviewUrlSigner) -> None:
    store, prepared = await _parent(signer, max_files=5)
    before = copy.deepcopy((prepared.query, prepared.histories))
    derived = _derive_workflow_files(store, files=[], query=prepared.query, histories=prepared.histories)
    derived.query[0]["file"]["url"] = "https://mutated.example/"
    derived.query[1]["text"]["content"] = "mutated"
    derived.histories[2]["value"][1]["text"]["content"] = "mutated"
    derived.histories.append({"obj": "Human", "value": []})
    assert (prepared.query, prepared.histories) == before


async def test_child_may_only_inherit_private_files_from_the_parent(signer: PreviewUrlSigner) -> None:
    store, prepared = await _parent(signer, max_files=5)
    with pytest.raises(
        WorkflowFileError, match="^Child workflow private file is not registered in the parent context$"
    ):
        _derive_workflow_files(store, files=[{"key": OWN_KEY_2, "url": "https://x.example/a"}])
    # inheriting a registered one works, and its source comes from the parent
    derived = _derive_workflow_files(store, files=[{"key": OWN_KEY}])
    assert derived.file_context is not None
    ref = derived.file_context.refs[0]
    assert derived.file_context.get_source(ref).object_key == OWN_KEY


@pytest.mark.parametrize("url", ["/etc/passwd", "file:///etc/passwd", "//h/x"])
async def test_child_new_external_urls_must_be_valid(signer: PreviewUrlSigner, url: str) -> None:
    store, _ = await _parent(signer, max_files=5)
    with pytest.raises(WorkflowFileError, match="^Invalid child workflow file URL$"):
        _derive_workflow_files(store, files=[url])


async def test_child_new_external_url_gets_its_own_ref(signer: PreviewUrlSigner) -> None:
    store, _ = await _parent(signer, max_files=5)
    derived = _derive_workflow_files(store, files=["https://n.example/new.pdf#x"])
    assert derived.file_context is not None
    source = derived.file_context.get_source("https://n.example/new.pdf#x")
    assert (source.kind, source.url) == ("external", "https://n.example/new.pdf#x")
    assert (
        derived.file_context.get_identity("https://n.example/new.pdf#x")
        == "external:https://n.example/new.pdf"
    )
    with pytest.raises(WorkflowFileError, match="^Workflow file is not selected for the child context$"):
        derived.file_context.get_source("https://h.example/old.pdf")


async def test_child_registrations_go_through_the_parent_and_respect_the_quota(
    signer: PreviewUrlSigner,
) -> None:
    store, prepared = await _parent(signer, max_files=2)
    derived = _derive_workflow_files(store, files=[], query=prepared.query, histories=[])
    assert derived.store is not None and derived.store.registrar is not None
    registrar = derived.store.registrar
    ref = await registrar.register_input_file({"url": "https://i.example/1.pdf"}, "interactive")
    assert ref is not None and derived.resolve_input_file({"url": "https://i.example/1.pdf"}) == ref.model_url
    assert store.file_context.resolve("https://i.example/1.pdf") is ref  # registered in the parent
    assert await registrar.register_input_file({"url": "https://i.example/2.pdf"}, "interactive") is None
    with pytest.raises(
        WorkflowFileError, match="^Workflow file key does not belong to the current workflow$"
    ):
        derived2 = _derive_workflow_files(store, files=[])
        assert derived2.store is not None and derived2.store.registrar is not None
        await derived2.store.registrar.register_input_file({"key": OTHER_CHAT_KEY}, "interactive")


async def test_run_with_derived_context_swaps_and_restores_the_current_store(
    signer: PreviewUrlSigner,
) -> None:
    store, prepared = await _parent(signer, max_files=5)
    token = set_workflow_files(store)
    try:

        async def child(derived: Any) -> Any:
            current = current_workflow_files()
            assert current is derived.store and current is not store
            return len(derived.query)

        assert await run_with_derived_workflow_file_context(child, files=[], query=prepared.query) == 2
        assert current_workflow_files() is store
    finally:
        set_workflow_files(None)
    assert token is not None


async def test_without_a_parent_context_inputs_are_still_copied() -> None:
    query = [{"text": {"content": "x"}}]

    async def child(derived: Any) -> Any:
        derived.query[0]["text"]["content"] = "changed"
        return derived.resolve_input_file("https://a.example/x")

    assert await run_with_derived_workflow_file_context(child, files=[], query=query) == "https://a.example/x"
    assert query == [{"text": {"content": "x"}}]
