"""Secrets (spec §6.6): AES-256-GCM storage, anyValueDecrypt, header secrets, masking in logs."""

from __future__ import annotations

import base64
import io
import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.security.secrets import (
    MASK,
    SecretBox,
    SecretDecryptError,
    SecretMaskingFilter,
    SecretRedactor,
    is_secret_value,
    mask_secret,
)

KEY = "test-secret-key-0123456789abcdef"
PLANTED = "sk-planted-SECRET-7f3a9c2e"


@pytest.fixture
def box() -> SecretBox:
    return SecretBox(KEY)


def test_storing_a_secret_encrypts_value_into_secret_and_blanks_value(box: SecretBox) -> None:
    stored = box.encrypt_secret_value({"secret": "", "value": PLANTED})
    assert stored["value"] == ""
    assert stored["secret"].startswith("v1:")
    assert PLANTED not in json.dumps(stored)
    assert box.decrypt(stored["secret"]) == PLANTED


def test_storing_twice_gives_different_ciphertexts(box: SecretBox) -> None:
    first = box.encrypt(PLANTED)
    second = box.encrypt(PLANTED)
    assert first != second
    assert box.decrypt(first) == box.decrypt(second) == PLANTED


def test_a_secret_object_with_empty_value_is_stored_unchanged(box: SecretBox) -> None:
    existing = {"secret": box.encrypt(PLANTED), "value": ""}
    assert box.encrypt_secret_value(existing) == existing
    assert box.encrypt_secret_value("plain") == "plain"
    assert box.encrypt_secret_value(None) is None


def test_any_value_decrypt_follows_fastgpt(box: SecretBox) -> None:
    token = box.encrypt(PLANTED)
    # plain value wins
    assert box.any_value_decrypt({"secret": token, "value": "override"}) == "override"
    # blank value -> decrypt secret
    assert box.any_value_decrypt({"secret": token, "value": ""}) == PLANTED
    # JSON string holding a secret object
    assert box.any_value_decrypt(json.dumps({"secret": token, "value": ""})) == PLANTED
    # non-secrets pass through (JSON strings come back parsed, as in FastGPT)
    assert box.any_value_decrypt("hello") == "hello"
    assert box.any_value_decrypt("42") == 42
    assert box.any_value_decrypt({"a": 1}) == {"a": 1}
    assert box.any_value_decrypt(None) is None
    assert box.any_value_decrypt([1, 2]) == [1, 2]


def test_header_secrets_bearer_and_basic_become_authorization(box: SecretBox) -> None:
    stored = box.store_secret_value({"Bearer": {"secret": "", "value": PLANTED}})
    assert stored["Bearer"]["value"] == ""
    assert box.get_secret_value(stored) == {"Authorization": f"Bearer {PLANTED}"}
    basic = box.store_secret_value({"Basic": {"secret": "", "value": "dXNlcjpwYXNz"}})
    assert box.get_secret_value(basic) == {"Authorization": "Basic dXNlcjpwYXNz"}
    custom = box.store_secret_value({"X-Api-Key": {"secret": "", "value": "abc123"}, "skip": "notobj"})
    assert box.get_secret_value(custom) == {"X-Api-Key": "abc123"}
    assert box.get_secret_value(None) == {}


def test_is_secret_value_needs_a_non_empty_secret() -> None:
    assert is_secret_value({"secret": "v1:x", "value": ""})
    assert not is_secret_value({"secret": "", "value": "x"})
    assert not is_secret_value("v1:x")
    assert not is_secret_value(None)


@pytest.mark.parametrize("position", [5, 20, -3])
def test_tampered_ciphertext_raises_a_clear_error(box: SecretBox, position: int) -> None:
    token = box.encrypt(PLANTED)
    raw = bytearray(base64.urlsafe_b64decode(token[3:]))
    raw[position] ^= 0x01
    tampered = "v1:" + base64.urlsafe_b64encode(bytes(raw)).decode()
    with pytest.raises(SecretDecryptError, match="altered"):
        box.decrypt(tampered)


@pytest.mark.parametrize("token", ["", "plain", "v1:", "v1:!!!notbase64", "v1:" + "A" * 8])
def test_malformed_ciphertext_raises_secret_decrypt_error(box: SecretBox, token: str) -> None:
    with pytest.raises(SecretDecryptError):
        box.decrypt(token)


def test_another_key_cannot_decrypt(box: SecretBox) -> None:
    token = box.encrypt(PLANTED)
    with pytest.raises(SecretDecryptError, match="FATHOM_SECRET_KEY"):
        SecretBox("a-different-key-0123456789").decrypt(token)


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=200))
def test_round_trip_any_text(text: str) -> None:
    box = SecretBox(KEY)
    assert box.decrypt(box.encrypt(text)) == text


def test_mask_secret_hides_short_values_entirely() -> None:
    assert mask_secret("abc") == MASK
    assert mask_secret("sk-0123456789abcdefXYZ1") == "****XYZ1"
    assert mask_secret("") == ""
    assert mask_secret(None) == ""


def test_redactor_ignores_tiny_values_and_masks_json_escaped_forms() -> None:
    redactor = SecretRedactor(["ab", 'pa"ss\\word'])
    assert redactor.redact("ab cd") == "ab cd"
    assert redactor.redact(json.dumps({"k": 'pa"ss\\word'})) == json.dumps({"k": MASK})


def _capture_logger(redactor: SecretRedactor) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s %(detail)s"))
    handler.addFilter(SecretMaskingFilter(redactor))
    logger = logging.getLogger(f"test.secrets.{id(stream)}")
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_logging_filter_masks_decrypted_secrets_everywhere(box: SecretBox) -> None:
    stored = box.store_secret_value({"Bearer": {"secret": "", "value": PLANTED}})
    fresh = SecretBox(KEY)  # a new process: only decrypting registers the value
    headers = fresh.get_secret_value(stored)
    logger, stream = _capture_logger(fresh.redactor)
    logger.info("calling with %s", headers, extra={"detail": f"token={PLANTED}"})
    try:
        raise RuntimeError(f"upstream rejected {PLANTED}")
    except RuntimeError:
        logger.exception("failed", extra={"detail": "-"})
    logger.warning(f"inline {PLANTED} and %d", 3, extra={"detail": "-"})
    output = stream.getvalue()
    assert PLANTED not in output
    assert output.count(MASK) >= 4
    assert "upstream rejected" in output and "inline" in output and "3" in output


def test_logging_filter_leaves_records_alone_without_secrets() -> None:
    logger, stream = _capture_logger(SecretRedactor())
    logger.info("value %s", PLANTED, extra={"detail": "x"})
    assert PLANTED in stream.getvalue()
