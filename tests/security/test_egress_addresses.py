"""Host parsing and address classification (spec §6.1), with hypothesis properties over every text form."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom.security.egress import AddressKind, HostError, classify, parse_host
from fathom.security.egress.addresses import _parse_ipv4_legacy

PRIVATE_V4 = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0X7F.0.0.1", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("0xa9.254.43518", "169.254.169.254"),
        ("169.16689662", "169.254.169.254"),
        ("0x", "0.0.0.0"),
        ("1.2.3.4.", "1.2.3.4"),
    ],
)
def test_legacy_ipv4_forms_read_like_inet_aton(text: str, expected: str) -> None:
    assert _parse_ipv4_legacy(text) == ipaddress.IPv4Address(expected)


INVALID_IPV4 = ["256.0.0.1", "1.2.3.4.5", "1.2.3.256", "1.65536.1", "08.0.0.1", "1..2", "", "a.1"]


@pytest.mark.parametrize("text", INVALID_IPV4)
def test_invalid_legacy_ipv4_forms_are_not_addresses(text: str) -> None:
    assert _parse_ipv4_legacy(text) is None


@pytest.mark.parametrize("host", ["o177.0.0.1", "0o177.0.0.1", "383.0.0.1", "example.0x1", "a.b.08"])
def test_host_ending_in_a_number_that_is_no_ipv4_address_is_refused(host: str) -> None:
    with pytest.raises(HostError):
        parse_host(host)


@pytest.mark.parametrize("host", ["", "bad_%09host", "a..b", "-a.com", "fe80::1%eth0", "::zz"])
def test_malformed_hosts_are_refused(host: str) -> None:
    with pytest.raises(HostError):
        parse_host(host)


def test_names_are_lower_cased_without_trailing_dots() -> None:
    assert parse_host("METADATA.GOOGLE.INTERNAL.").name == "metadata.google.internal"


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("169.254.169.254", AddressKind.METADATA),
        ("169.254.0.1", AddressKind.METADATA),
        ("100.100.100.200", AddressKind.METADATA),
        ("168.63.129.16", AddressKind.METADATA),
        ("fd00:ec2::254", AddressKind.METADATA),
        ("::ffff:169.254.169.254", AddressKind.METADATA),
        ("0.0.0.0", AddressKind.UNSPECIFIED),
        ("::", AddressKind.UNSPECIFIED),
        ("127.0.0.1", AddressKind.LOOPBACK),
        ("::1", AddressKind.LOOPBACK),
        ("::ffff:127.0.0.1", AddressKind.LOOPBACK),
        ("::127.0.0.1", AddressKind.LOOPBACK),
        ("64:ff9b::7f00:1", AddressKind.LOOPBACK),
        ("2002:7f00:1::", AddressKind.LOOPBACK),
        ("fe80::1", AddressKind.LINK_LOCAL),
        ("10.1.2.3", AddressKind.PRIVATE),
        ("172.31.255.255", AddressKind.PRIVATE),
        ("192.168.1.1", AddressKind.PRIVATE),
        ("fd12::1", AddressKind.PRIVATE),
        ("2002:c0a8:1::", AddressKind.PRIVATE),
        ("100.64.0.1", AddressKind.SHARED),
        ("224.0.0.1", AddressKind.MULTICAST),
        ("ff02::1", AddressKind.MULTICAST),
        ("255.255.255.255", AddressKind.RESERVED),
        ("240.0.0.1", AddressKind.RESERVED),
        ("192.0.2.10", AddressKind.RESERVED),
        ("8.8.8.8", AddressKind.PUBLIC),
        ("93.184.215.14", AddressKind.PUBLIC),
        ("2606:4700:4700::1111", AddressKind.PUBLIC),
        ("::ffff:8.8.8.8", AddressKind.PUBLIC),
        ("2002:808:808::", AddressKind.PUBLIC),
    ],
)
def test_addresses_are_classified_by_what_they_reach(address: str, kind: AddressKind) -> None:
    assert classify(ipaddress.ip_address(address)) is kind


# --- properties ---------------------------------------------------------------------------------------


def _forms(value: int) -> list[str]:
    """Every IPv4 text form the guard must understand for the 32-bit ``value``."""
    b = value.to_bytes(4, "big")
    dotted = ".".join(str(x) for x in b)
    return [
        dotted,
        str(value),
        hex(value),
        "0" + oct(value)[2:],
        ".".join(hex(x) for x in b),
        ".".join("0" + oct(x)[2:] for x in b),
        f"{b[0]}.{int.from_bytes(b[1:], 'big')}",
        f"{b[0]}.{b[1]}.{int.from_bytes(b[2:], 'big')}",
        f"{hex(b[0])}.{b[1]}.{int.from_bytes(b[2:], 'big')}",
        dotted + ".",
    ]


def _v6_forms(v4: ipaddress.IPv4Address) -> list[str]:
    n = int(v4)
    return [
        f"::ffff:{v4}",
        str(ipaddress.IPv6Address((0xFFFF << 32) | n)),
        f"64:ff9b::{v4}",
        str(ipaddress.IPv6Address((0x2002 << 112) | (n << 80))),
        f"::ffff:0:{v4}",
    ]


private_v4 = st.sampled_from(PRIVATE_V4).flatmap(
    lambda net: st.integers(int(net.network_address), int(net.broadcast_address))
)


@given(private_v4)
def test_any_private_ipv4_in_any_text_form_is_classified_private(value: int) -> None:
    for form in _forms(value):
        parsed = parse_host(form)
        assert parsed.ip == ipaddress.IPv4Address(value), form
        assert classify(parsed.ip) is AddressKind.PRIVATE, form
    for form in _v6_forms(ipaddress.IPv4Address(value)):
        parsed = parse_host(form)
        assert parsed.ip is not None
        assert classify(parsed.ip) is AddressKind.PRIVATE, form


@given(st.integers(0, 2**32 - 1))
def test_every_ipv4_text_form_reads_back_the_same_address(value: int) -> None:
    for form in _forms(value):
        assert _parse_ipv4_legacy(form) == ipaddress.IPv4Address(value), form


@given(st.integers(0, 2**32 - 1))
def test_ipv4_in_ipv6_forms_classify_like_the_ipv4_address(value: int) -> None:
    v4 = ipaddress.IPv4Address(value)
    for form in _v6_forms(v4):
        parsed = parse_host(form)
        assert parsed.ip is not None
        assert classify(parsed.ip) is classify(v4), form


@given(st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)))
def test_no_address_python_calls_non_global_is_public(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    if not ip.is_global or ip.is_loopback or ip.is_private or ip.is_link_local:
        assert classify(ip) is not AddressKind.PUBLIC


@given(st.ip_addresses(v=4, network="127.0.0.0/8") | st.ip_addresses(v=6, network="::1/128"))
def test_loopback_addresses_are_loopback(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    assert classify(ip) is AddressKind.LOOPBACK


@given(st.ip_addresses(v=6, network="fc00::/7"))
def test_unique_local_ipv6_in_any_text_form_is_private(ip: ipaddress.IPv6Address) -> None:
    expected = AddressKind.METADATA if str(ip) in ("fd00:ec2::254", "fd20:ce::254") else AddressKind.PRIVATE
    for form in (str(ip), ip.exploded, f"[{ip}]", ip.exploded.upper()):
        parsed = parse_host(form)
        assert parsed.ip == ip, form
        assert classify(parsed.ip) is expected, form
