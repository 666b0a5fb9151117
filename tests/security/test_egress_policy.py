"""Policy decisions of the egress guard: allow-lists, mixed answers, metadata, messages, settings."""

from __future__ import annotations

import pytest

from fathom.config import Settings
from fathom.security import EgressDenied, EgressGuard, EgressPolicy, EgressResolveError, StaticResolver
from fathom.security.egress import ALLOW_CIDRS_SETTING, ALLOW_HOSTS_SETTING, PRIVATE_URL_TEXT


def guard(table: dict[str, list[str]] | None = None, **policy: object) -> EgressGuard:
    return EgressGuard(EgressPolicy(**policy), resolver=StaticResolver(table or {}))  # type: ignore[arg-type]


async def test_private_address_is_blocked_by_default_and_message_names_address_and_setting() -> None:
    with pytest.raises(EgressDenied) as info:
        await guard().check_url("http://10.1.2.3:8080/api")
    message = str(info.value)
    assert message.startswith(PRIVATE_URL_TEXT)
    assert "10.1.2.3" in message and "10.1.2.3/32" in message and ALLOW_CIDRS_SETTING in message
    assert info.value.address == "10.1.2.3"
    assert info.value.setting == ALLOW_CIDRS_SETTING


async def test_private_name_message_offers_host_and_cidr_settings() -> None:
    with pytest.raises(EgressDenied) as info:
        await guard({"wiki.corp": ["192.168.7.9"]}).check_url("https://wiki.corp/page")
    message = str(info.value)
    assert "wiki.corp resolves to a blocked address" in message
    assert f"add wiki.corp to {ALLOW_HOSTS_SETTING}" in message and ALLOW_CIDRS_SETTING in message
    assert "192.168.7.9" not in message  # what an internal name resolves to is not the caller's to know
    assert info.value.address == "192.168.7.9"


async def test_allow_listed_cidr_permits_private_and_loopback_addresses() -> None:
    g = guard(allow_cidrs=["10.0.0.0/8", "127.0.0.1/32"])
    assert await g.check_url("http://10.9.8.7/") == ["10.9.8.7"]
    assert await g.check_url("http://127.0.0.1:3000/") == ["127.0.0.1"]
    with pytest.raises(EgressDenied):
        await g.check_url("http://127.0.0.2/")


async def test_allow_listed_host_permits_whatever_it_resolves_to_except_metadata() -> None:
    g = guard(
        {
            "api.internal": ["10.0.0.5", "fd00::5"],
            "a.svc.corp": ["172.16.0.1"],
            "bad.internal": ["169.254.169.254"],
        },
        allow_hosts=["api.internal", "*.svc.corp", "bad.internal"],
    )
    assert await g.check_url("http://API.internal./x") == ["10.0.0.5", "fd00::5"]
    assert await g.check_url("http://a.svc.corp/") == ["172.16.0.1"]
    with pytest.raises(EgressDenied, match="bad.internal resolves to a blocked address; it is never allowed"):
        await g.check_url("http://bad.internal/")


async def test_metadata_is_never_allowed_even_when_allow_listed() -> None:
    g = guard(allow_cidrs=["169.254.0.0/16", "0.0.0.0/0"], allow_hosts=["metadata.google.internal"])
    for url in ("http://169.254.169.254/latest/", "http://[::ffff:169.254.169.254]/", "http://2852039166/"):
        with pytest.raises(EgressDenied) as info:
            await g.check_url(url)
        assert info.value.setting is None
    with pytest.raises(EgressDenied, match="metadata host name"):
        await g.check_url("http://metadata.google.internal/computeMetadata/v1/")


async def test_unspecified_address_is_never_allowed() -> None:
    with pytest.raises(EgressDenied, match="unspecified"):
        await guard(allow_cidrs=["0.0.0.0/0"]).check_url("http://0.0.0.0:80/")


async def test_mixed_answer_with_one_private_address_is_blocked() -> None:
    g = guard({"mixed.example": ["93.184.215.14", "10.0.0.1"]})
    with pytest.raises(EgressDenied) as info:
        await g.check_url("https://mixed.example/")
    assert info.value.address == "10.0.0.1"


async def test_public_answer_returns_every_checked_address() -> None:
    g = guard({"example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]})
    assert await g.check_url("https://example.com/") == [
        "93.184.215.14",
        "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]


async def test_localhost_name_is_blocked_unless_the_name_is_allow_listed() -> None:
    with pytest.raises(EgressDenied, match=ALLOW_HOSTS_SETTING):
        await guard({"localhost": ["127.0.0.1"]}, allow_cidrs=["127.0.0.1/32"]).check_url("http://localhost/")
    allowed = guard({"localhost": ["127.0.0.1"]}, allow_hosts=["localhost"])
    assert await allowed.check_url("http://localhost:9/") == ["127.0.0.1"]


async def test_unresolvable_name_is_an_error_not_an_allow() -> None:
    with pytest.raises(EgressResolveError, match="nowhere.example"):
        await guard().check_url("http://nowhere.example/")


async def test_resolver_answer_that_is_not_an_ip_is_refused() -> None:
    with pytest.raises(EgressDenied, match="not an IP address"):
        await guard({"odd.example": ["not-an-ip"]}).check_url("http://odd.example/")


@pytest.mark.parametrize("url", ["ftp://example.com/", "gopher://x/", "//example.com/", "example.com/x"])
async def test_non_http_urls_are_refused(url: str) -> None:
    with pytest.raises(EgressDenied, match="Only http and https"):
        await guard().check_url(url)


def test_policy_from_settings_reads_the_allow_lists() -> None:
    settings = Settings(egress_allow_cidrs=["10.0.0.0/8"], egress_allow_hosts=["api.internal"])
    policy = EgressPolicy.from_settings(settings, max_bytes=1024)
    assert policy.allow_cidrs == ("10.0.0.0/8",)
    assert policy.allow_hosts == ("api.internal",)
    assert policy.max_bytes == 1024 and policy.max_redirects == 5


@pytest.mark.parametrize(
    ("field", "value"), [("allow_cidrs", ["10.0.0.0/33"]), ("allow_hosts", ["http://x/"])]
)
def test_bad_allow_list_entries_are_rejected_naming_the_setting(field: str, value: list[str]) -> None:
    with pytest.raises(ValueError, match="FATHOM_EGRESS_ALLOW_"):
        EgressPolicy(**{field: value})  # type: ignore[arg-type]
