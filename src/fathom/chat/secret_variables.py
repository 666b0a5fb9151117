"""Chat variables of type ``password`` (FastGPT ``VariableInputEnum.password``).

A password variable is kept as the secrets module's ``{secret, value}`` object: ``secret`` the AES-GCM
ciphertext, ``value`` blank. That object is what the chat stores; the run decrypts it where its
variables are built (``workflow.run._build_variables``), so a node that references the variable gets
the plain value and nothing else sees it: no chat or history route answers it, ``newVariables`` and
``updateVariables`` leave it out, and the plain value is registered with the log masking filter when
it is sealed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class SecretSealer(Protocol):
    def encrypt(self, plaintext: str) -> str: ...


@dataclass(frozen=True)
class PasswordVariable:
    key: str
    label: str | None


def _password_variables(chat_config: Mapping[str, Any] | None) -> list[PasswordVariable]:
    """The app's password variables (key and label) from its ``chatConfig.variables``."""
    found = []
    for item in (chat_config or {}).get("variables") or []:
        if isinstance(item, Mapping) and item.get("type") == "password" and item.get("key"):
            label = item.get("label")
            found.append(PasswordVariable(str(item["key"]), str(label) if label else None))
    return found


def _is_sealed(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value.get("secret")) and not value.get("value")


def seal_password_variables(
    variables: Mapping[str, Any],
    chat_config: Mapping[str, Any] | None,
    secrets: SecretSealer | None,
    *,
    given: Mapping[str, Any] | None = None,
    stored: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``variables`` as a chat stores them: each password variable under its key as ``{secret, value: ""}``.

    The plain value is the one the request gave (by label or key, as the run reads it), else the one
    already stored stays; a value the run decrypted never replaces the stored ciphertext. Without a
    secrets service password variables are left out rather than stored in clear."""
    sealed = dict(variables)
    given, stored = given or {}, stored or {}
    for variable in _password_variables(chat_config):
        if variable.label:
            sealed.pop(variable.label, None)
        raw = (given.get(variable.label) if variable.label else None) or given.get(variable.key)
        if raw is None or raw == "":
            previous = stored.get(variable.key)
            if _is_sealed(previous):
                sealed[variable.key] = dict(previous)  # type: ignore[arg-type]
            else:
                sealed.pop(variable.key, None)
            continue
        if _is_sealed(raw):
            sealed[variable.key] = dict(raw)
        elif isinstance(raw, Mapping) and raw.get("value") and secrets is not None:
            sealed[variable.key] = {"secret": secrets.encrypt(str(raw["value"])), "value": ""}
        elif secrets is not None and not isinstance(raw, Mapping):
            sealed[variable.key] = {"secret": secrets.encrypt(str(raw)), "value": ""}
        else:
            sealed.pop(variable.key, None)
    return sealed


def without_password_variables(
    variables: Mapping[str, Any], chat_config: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``variables`` with every password variable (by key and by label) left out, for answers."""
    hidden = set()
    for variable in _password_variables(chat_config):
        hidden.add(variable.key)
        if variable.label:
            hidden.add(variable.label)
    return {key: value for key, value in variables.items() if key not in hidden}


def public_chat_config(chat_config: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The app's variable definitions as a chat client sees them: no default value of a password."""
    shown = []
    for item in (chat_config or {}).get("variables") or []:
        if isinstance(item, Mapping) and item.get("type") == "password":
            item = {k: v for k, v in item.items() if k != "defaultValue"}
        shown.append(dict(item) if isinstance(item, Mapping) else item)
    return shown


__all__ = [
    "PasswordVariable",
    "public_chat_config",
    "seal_password_variables",
    "without_password_variables",
]
