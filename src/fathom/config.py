"""Settings: one object built at start (from ``FATHOM_*`` variables) and passed down.

No module reads the environment on its own; everything that needs a setting receives this object
(or the few fields it needs) as an argument.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

SECRET_KEY_FILE = "secret_key"


class ConfigError(Exception):
    """A setting is wrong. The message is one line naming the setting and the fix."""


class Settings(BaseSettings):
    """Every knob of a Fathom process. Environment variables use the prefix ``FATHOM_``."""

    model_config = SettingsConfigDict(env_prefix="FATHOM_", extra="ignore", env_file=None)

    data_dir: Path = Field(default=Path("data"), description="Where the SQLite file, files and keys live.")
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL. Default: SQLite file fathom.db in the data dir. "
        "postgresql://user@host/db selects PostgreSQL (psycopg 3).",
    )
    redis_url: str | None = Field(default=None, description="Optional Redis for fan-out across replicas.")
    models_file: Path | None = Field(default=None, description="YAML or JSON file listing model endpoints.")
    host: str = "127.0.0.1"
    port: int = Field(default=3000, ge=1, le=65535)
    secret_key: SecretStr | None = Field(
        default=None, description="Key for signing and encryption; generated into the data dir if unset."
    )
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["text", "json"] = "text"
    max_body_bytes: int = Field(default=20 * 1024 * 1024, ge=1024, description="Request body size limit.")
    workers: int = Field(default=2, ge=0, le=64, description="In-process background job workers.")
    job_lease_seconds: float = Field(default=60.0, gt=0)
    chat_lease_seconds: float = Field(
        default=30.0,
        ge=3,
        description="A running chat answer whose replica has not refreshed it for this long (the replica "
        "died) reads as interrupted; the replica refreshes it every third of this.",
    )
    job_poll_seconds: float = Field(
        default=1.0,
        gt=0,
        le=3600,
        description="How often an idle worker looks for jobs queued by another process or due later (a "
        "job queued by this process wakes its in-process workers at once).",
    )
    job_max_attempts: int = Field(default=3, ge=1)
    job_retry_delay_seconds: float = Field(
        default=5.0, ge=0, description="Wait before a failed job that may succeed later runs again."
    )
    vector_int8_scan_min_rows: int = Field(
        default=20_000,
        ge=0,
        description="SQLite: from this many vectors on, a scan is int8 first, then rescored in float32.",
    )
    seed_demo: bool = Field(
        default=True, description="On the first `fathom serve`, seed the demo knowledge base and app."
    )

    # Accounts (console sign-in by password).
    root_password: SecretStr | None = Field(
        default=None,
        description="The root user's password, set on first start (else one is generated and printed once).",
    )
    session_hours: float = Field(default=168.0, gt=0, description="A console session lasts this long.")
    # argon2id's cost for every password hashed or checked (RFC 9106's second recommendation by default);
    # a stored hash of other costs still verifies and is hashed again at its next sign-in.
    password_hash_memory_kib: int = Field(
        default=65536, ge=64, le=4 * 1024 * 1024, description="argon2id memory per hash, in KiB."
    )
    password_hash_passes: int = Field(default=3, ge=1, le=16, description="argon2id passes over it.")
    signin_max_failures_per_user: int = Field(default=5, ge=1)
    signin_max_failures_per_ip: int = Field(default=20, ge=1)
    signin_window_seconds: float = Field(default=900.0, gt=0)
    trusted_proxies: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Addresses (IPs or CIDRs, comma-separated) of the reverse proxies whose "
        "X-Forwarded-For / X-Forwarded-Proto are believed; none by default.",
    )

    # Uploads (chat files, knowledge-base files, file previews): each caller (a member's session, an API
    # key, a share-link visitor) may send this many a minute (0: no limit), and a team may keep this many
    # bytes of stored files (0: no limit). Counted in the database, so both hold across replicas.
    upload_rate_per_minute: int = Field(
        default=30, ge=0, description="Uploads a minute per caller (member, API key, visitor); 0 = no limit."
    )
    team_storage_quota_bytes: int = Field(
        default=5 * 1024**3, ge=0, description="Bytes of stored files per team; 0 = no limit."
    )

    # Model shortcuts for the common case (one OpenAI-compatible endpoint).
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    chat_model: str | None = None

    # Egress guard (outbound HTTP). Private ranges are blocked unless listed here.
    egress_allow_cidrs: list[str] = Field(default_factory=list)
    egress_allow_hosts: list[str] = Field(default_factory=list)

    # Chat files (spec 6.4, 6.5): external file URLs in a chat must be on one of these hosts (empty:
    # any host; the egress guard still applies when a node reads them); private files are shown to
    # models as signed preview links under public_url (default http://{host}:{port}).
    file_url_whitelist: list[str] = Field(default_factory=list)
    public_url: str | None = Field(default=None, description="The address users reach this server at.")

    # MCP tool sets over stdio: the programs a team may start (exact paths or names); none by default.
    mcp_stdio_commands: list[str] = Field(default_factory=list)

    # Code sandbox: refuse to run code without OS isolation unless this is set.
    sandbox_allow_insecure: bool = False

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_level(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _proxy_list(cls, value: object) -> object:
        """A comma-separated list (or a JSON list) of IPs and CIDRs, each checked."""
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else text.split(",")
        if not isinstance(value, list):
            return value
        entries = [str(entry).strip() for entry in value if str(entry).strip()]
        for entry in entries:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(
                    f"{entry!r} is not an IP address or CIDR (e.g. 10.0.0.5 or 10.0.0.0/24)"
                ) from None
        return entries

    @property
    def resolved_database_url(self) -> str:
        """The database URL with the SQLite default filled in."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'fathom.db').resolve()}"

    def ensure_data_dir(self) -> Path:
        """Create the data dir if needed and prove it writable, else raise ConfigError."""
        path = self.data_dir
        try:
            path.mkdir(parents=True, exist_ok=True)
            # A name of this process's own: a server and a worker starting on one data dir at once
            # must not unlink each other's probe (the loser saw ENOENT and refused to start).
            probe = path / f".write-probe-{os.getpid()}-{secrets.token_hex(4)}"
            probe.write_text("ok")
            probe.unlink()
        except OSError as exc:
            raise ConfigError(
                f"FATHOM_DATA_DIR={path} is not writable ({exc.strerror or exc}); "
                "point FATHOM_DATA_DIR at a directory this user can write."
            ) from None
        return path

    def load_secret_key(self) -> str:
        """The configured secret key, else the one stored in the data dir, else a new stored one."""
        if self.secret_key is not None:
            value = self.secret_key.get_secret_value()
            if len(value) < 16:
                raise ConfigError("FATHOM_SECRET_KEY is shorter than 16 characters; use a long random value.")
            return value
        path = self.ensure_data_dir() / SECRET_KEY_FILE
        if path.exists():
            return path.read_text().strip()
        value = secrets.token_urlsafe(48)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(value)
        return value


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment, turning validation errors into one-line ConfigErrors."""
    from pydantic import ValidationError

    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "settings"
        raise ConfigError(f"FATHOM_{field.upper()}: {first['msg']}") from None
