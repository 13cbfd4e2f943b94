"""Body field types that accept exactly what their JSON Schema says.

API bodies are validated in pydantic's strict mode (no `"stream": 0` read as false, no `"7"`
read as 7), found by schemathesis (config/tests/test_schemathesis.py). Strict mode is stricter
than JSON Schema in one place: an integral number written as `7.0` is an integer in JSON
Schema, and must be accepted; a boolean is not an integer there, though Python says it is.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict

STRICT = ConfigDict(strict=True)


def _json_integer(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected an integer, not a boolean")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JSON_INTEGER = BeforeValidator(_json_integer)
JsonInt = Annotated[int, JSON_INTEGER]
Vote = Annotated[Literal[1, -1], JSON_INTEGER]
# Bounds of an optional integer go inside the Annotated, ahead of the validator: given as
# Field(ge=…) on `JsonInt | None`, pydantic writes them into the schema as unknown `ge`/`le` keys.
