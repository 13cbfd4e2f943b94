"""The secret key of an install that was given none: generated once, kept under `var/`.

A key published in the repository lets anyone sign sessions, CSRF tokens and the chat's
feedback tickets for every default install (docs/decisions/0034). So there is no constant:
`SECRET_KEY` from the environment wins, and otherwise the first process to start writes a
random key to `var/secret_key` (mode 0600) that every later process, the worker and the
test runs read back.

This module must not import Django: settings call it while they load.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

DEFAULT_KEY_FILE = Path(__file__).resolve().parent.parent / "var" / "secret_key"
# Django's own warning (security.W009) asks for at least 50 characters; 50 bytes of
# token_urlsafe is 67.
KEY_BYTES = 50
MIN_KEY_CHARS = 50


class SecretKeyFileInvalid(RuntimeError):
    """The key file exists but cannot be used; it is never overwritten, so nothing signed is lost."""


def key_file_path() -> Path:
    raw = os.environ.get("ANSWERDESK_SECRET_KEY_FILE", "").strip()
    return Path(raw).expanduser() if raw else DEFAULT_KEY_FILE


def _read(path: Path) -> str:
    key = path.read_text(encoding="utf-8").strip()
    if len(key) < MIN_KEY_CHARS:
        raise SecretKeyFileInvalid(
            f"{path} holds {len(key)} characters, fewer than {MIN_KEY_CHARS}: not a key this project wrote. "
            "Delete it to generate a new one (sessions and links signed with it stop working), "
            "or set SECRET_KEY."
        )
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise SecretKeyFileInvalid(
            f"{path} is readable by other users (mode {mode:o}); run `chmod 600 {path}` or set SECRET_KEY."
        )
    return key


def generated_secret_key(path: Path | None = None) -> str:
    """The key kept in `path`, created on first use.

    Race-safe without a lock: each process writes a complete key to its own temporary file
    and publishes it with link(2), which fails if the name exists. The loser reads the
    winner's key, so two processes starting at once agree, and a reader never sees a
    half-written file.
    """
    path = path or key_file_path()
    if path.exists():
        return _read(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(secrets.token_urlsafe(KEY_BYTES) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process won; its key is the key
    finally:
        temporary.unlink(missing_ok=True)
    return _read(path)
