"""Secrets (spec §6.6): ``{secret, value}`` objects, AES-256-GCM at rest, masking in logs.

A secret input is the object ``{"secret": <ciphertext>, "value": <plaintext>}``. Storing it encrypts
``value`` into ``secret`` and blanks ``value``; using it decrypts ``secret`` at the point of use only.
Every plaintext that passes through :class:`SecretBox` is registered with its :class:`SecretRedactor`, so
the :class:`SecretMaskingFilter` installed on the log handlers masks it wherever it appears.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from fathom.json_values import js_truthy

TOKEN_PREFIX = "v1:"
"""Ciphertext format tag: ``v1:`` + urlsafe base64 of ``nonce(12) || ciphertext || tag(16)``."""

HEADER_SECRET_BEARER = "Bearer"
HEADER_SECRET_BASIC = "Basic"
MASK = "******"
MIN_REDACT_LENGTH = 4
"""Registered values shorter than this are not masked in logs (they would mask ordinary words)."""

_NONCE_BYTES = 12
_HKDF_SALT = b"fathom/secrets/v1"
_HKDF_INFO = b"aes-256-gcm secret values"


class SecretDecryptError(ValueError):
    """A stored secret could not be decrypted: altered ciphertext, wrong format, or a changed key."""


def derive_secret_key(secret_key: str | bytes, *, info: bytes = _HKDF_INFO) -> bytes:
    """A 32-byte key derived from the settings secret key with HKDF-SHA-256 (domain-separated by ``info``)."""
    material = secret_key.encode() if isinstance(secret_key, str) else secret_key
    if not material:
        raise ValueError("secret key is empty")
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=_HKDF_SALT, info=info).derive(material)


class SecretRedactor:
    """Thread-safe set of secret strings; :meth:`redact` replaces each one in a text by ``******``."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._values: frozenset[str] = frozenset()
        for value in values:
            self.register(value)

    def register(self, value: str) -> None:
        """Remember ``value`` (and its JSON-escaped form) so later log lines mask it."""
        if not isinstance(value, str) or len(value) < MIN_REDACT_LENGTH:
            return
        escaped = json.dumps(value)[1:-1]
        with self._lock:
            self._values = self._values | {value, escaped}

    @property
    def values(self) -> frozenset[str]:
        """The registered strings (for tests and diagnostics; never log this)."""
        return self._values

    def redact(self, text: str) -> str:
        """``text`` with every registered secret replaced by ``******`` (longest first)."""
        values = self._values
        if not values or not text:
            return text
        for value in sorted(values, key=len, reverse=True):
            if value in text:
                text = text.replace(value, MASK)
        return text

    def contains_secret(self, text: str) -> bool:
        """Whether ``text`` holds any registered secret."""
        return any(value in text for value in self._values)


def mask_secret(value: str | None) -> str:
    """A display form of a secret: ``****abcd`` for long values (last 4 shown), else ``******``."""
    if not value:
        return ""
    if len(value) >= 16:
        return "****" + value[-4:]
    return MASK


_STANDARD_RECORD_KEYS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class SecretMaskingFilter(logging.Filter):
    """Logging filter masking registered secret values in the message, arguments, exception and extras.

    Install it on handlers (not loggers) so records from every logger pass through it.
    """

    def __init__(self, redactor: SecretRedactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        redactor = self.redactor
        if not redactor.values:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: mask the raw template instead
            message = str(record.msg)
        if redactor.contains_secret(message):
            record.msg = redactor.redact(message)
            record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redactor.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redactor.redact(record.stack_info)
        for key, value in list(record.__dict__.items()):
            if key not in _STANDARD_RECORD_KEYS and isinstance(value, str):
                record.__dict__[key] = redactor.redact(value)
        return True


class SecretBox:
    """Encrypts and decrypts secret values with AES-256-GCM under a key derived from the settings key.

    Decrypted plaintexts are registered with ``redactor`` (a fresh one if none is given) so they are
    masked in logs from then on.
    """

    def __init__(self, secret_key: str | bytes, redactor: SecretRedactor | None = None) -> None:
        self._aead = AESGCM(derive_secret_key(secret_key))
        self.redactor = redactor if redactor is not None else SecretRedactor()

    # -- raw strings -------------------------------------------------------------------------------

    def encrypt(self, plaintext: str) -> str:
        """Ciphertext token for ``plaintext`` (fresh random nonce each call)."""
        self.redactor.register(plaintext)
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, plaintext.encode("utf-8"), None)
        return TOKEN_PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def decrypt(self, token: str) -> str:
        """Plaintext of a token from :meth:`encrypt`; :class:`SecretDecryptError` if it is not authentic."""
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX):
            raise SecretDecryptError("Secret value is not in the encrypted format (expected 'v1:...').")
        try:
            raw = base64.urlsafe_b64decode(token[len(TOKEN_PREFIX) :].encode("ascii"))
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise SecretDecryptError("Secret value is not valid base64; it was altered.") from None
        if len(raw) < _NONCE_BYTES + 16:
            raise SecretDecryptError("Secret value is truncated; it was altered.")
        try:
            plain = self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], None)
        except InvalidTag:
            raise SecretDecryptError(
                "Secret value failed authentication: it was altered, "
                "or FATHOM_SECRET_KEY changed since it was stored."
            ) from None
        text = plain.decode("utf-8")
        self.redactor.register(text)
        return text

    # -- {secret, value} objects (FastGPT semantics) ----------------------------------------------

    def encrypt_secret_value(self, value: Any) -> Any:
        """``{secret, value}`` with ``value`` encrypted into ``secret`` and blanked; others unchanged."""
        if not isinstance(value, Mapping):
            return value
        if not value.get("value"):
            return dict(value)
        return {"secret": self.encrypt(str(value["value"])), "value": ""}

    def store_secret_value(self, store_secret: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every entry of a header-secret map encrypted for storage (``storeSecretValue``)."""
        return {key: self.encrypt_secret_value(value) for key, value in (store_secret or {}).items()}

    def get_secret_value(self, store_secret: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Request headers from a stored header-secret map: ``Bearer``/``Basic`` become ``Authorization``."""
        headers: dict[str, str] = {}
        for key, entry in (store_secret or {}).items():
            if not isinstance(entry, Mapping):
                continue
            actual = entry.get("value") or self.decrypt(str(entry.get("secret") or ""))
            actual = str(actual)
            self.redactor.register(actual)
            if key == HEADER_SECRET_BEARER:
                headers["Authorization"] = f"Bearer {actual}"
            elif key == HEADER_SECRET_BASIC:
                headers["Authorization"] = f"Basic {actual}"
            else:
                headers[key] = actual
        return headers

    def any_value_decrypt(self, value: Any) -> Any:
        """FastGPT ``anyValueDecrypt``: parse JSON strings, prefer a set ``value``, else decrypt ``secret``.

        Anything that is not a secret object passes through unchanged (a JSON string comes back parsed).
        """
        parsed = value
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = value
        if isinstance(parsed, Mapping) and parsed.get("value"):
            plain = parsed["value"]
            if isinstance(plain, str):
                self.redactor.register(plain)
            return plain
        if not is_secret_value(parsed):
            return parsed
        return self.decrypt(str(parsed["secret"]))


def is_secret_value(value: Any) -> bool:
    """Whether ``value`` is a stored secret object (``{"secret": …, "value": …}``, FastGPT's
    ``isSecretValue``: an object whose ``secret`` is truthy in JavaScript's sense)."""
    return isinstance(value, Mapping) and js_truthy(value.get("secret"))
