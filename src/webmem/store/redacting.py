"""The one point every stored text passes: statement parameters redacted with the memory's secrets.

Components redact what they store as well; this is the guarantee that a component that forgets (or one
written later) cannot write a secret. Every parameter bound to a free-text column (``Text`` or ``JSON``)
of any statement, in any of its written forms (see :mod:`webmem.core.redaction`), is replaced by its
placeholder before it reaches the database, lookups included, so that a lookup by a text finds what was
stored. Identifiers, names, statuses and timestamps (``String``, numbers, dates) are left alone: a short
secret that happens to be part of an id must not change the id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import JSON, Engine, Text, event

from ..core.redaction import SecretRegistry

_REGISTRIES: WeakKeyDictionary[Engine, SecretRegistry] = WeakKeyDictionary()


def redact_parameters(engine: Engine, secrets: SecretRegistry) -> None:
    """Redact, with ``secrets``, the free-text parameters of every statement ``engine`` runs
    (statements run on the driver's cursor by :mod:`webmem.store.prepared` ask :func:`secrets_for`)."""
    _REGISTRIES[engine] = secrets

    def before_cursor_execute(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                              executemany: bool) -> tuple[str, Any]:
        compiled = getattr(context, "compiled", None)
        if not len(secrets) or compiled is None or not parameters:  # no secret, or SQL of webmem's own
            return statement, parameters
        kinds = {name: kind for name, bind in compiled.binds.items() if (kind := text_kind(bind.type)) is not None}
        if not kinds:
            return statement, parameters
        order = getattr(compiled, "positiontup", None)
        if executemany:
            return statement, [_redacted(row, kinds, order, secrets) for row in parameters]
        return statement, _redacted(parameters, kinds, order, secrets)

    event.listen(engine, "before_cursor_execute", before_cursor_execute, retval=True)


def secrets_for(engine: Engine) -> SecretRegistry | None:
    """The secrets whose values never reach ``engine``'s database."""
    return _REGISTRIES.get(engine)


def text_kind(type_: Any) -> bool | None:
    """How a parameter of this type is redacted: None (not free text), False (a text), True (a JSON document)."""
    return isinstance(type_, JSON) if isinstance(type_, Text | JSON) else None


def redacted_value(value: Any, is_json: bool, secrets: SecretRegistry) -> Any:
    """A bound parameter (as the driver receives it) with the secrets replaced."""
    return _value(value, is_json, secrets)


def _redacted(row: Any, kinds: dict[str, bool], order: Sequence[str] | None, secrets: SecretRegistry) -> Any:
    if isinstance(row, dict):
        return {name: _value(value, kinds[name], secrets) if name in kinds else value for name, value in row.items()}
    if order is not None and isinstance(row, tuple | list) and len(row) == len(order):
        return type(row)(_value(value, kinds[name], secrets) if name in kinds else value
                         for name, value in zip(order, row))
    return row


def _value(value: Any, is_json: bool, secrets: SecretRegistry) -> Any:
    """A text redacted; a JSON document redacted in its strings only (its numbers, and the values of its
    ids and hashes, are left as they are: a secret of digits must not turn 1234.5 into {pin}.5)."""
    if isinstance(value, str) and not is_json:
        return secrets.redact(value)
    if isinstance(value, str):
        try:
            document = json.loads(value)
        except ValueError:
            return secrets.redact(value)
        return json.dumps(_strings_redacted(document, secrets))
    wrapped = getattr(value, "obj", None)  # psycopg's Json / Jsonb around the structure to store
    if wrapped is not None and hasattr(value, "dumps"):
        return type(value)(_strings_redacted(wrapped, secrets), value.dumps)
    return value


def _strings_redacted(value: Any, secrets: SecretRegistry, key: str = "") -> Any:
    if isinstance(value, str):
        return value if _STRUCTURAL.search(key) else (secrets.redact(value) or value)
    if isinstance(value, dict):
        return {name: _strings_redacted(item, secrets, str(name)) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [_strings_redacted(item, secrets, key) for item in value]
    return value


#: Keys of JSON documents whose values identify something (``trajectory_id``, ``snapshot_hash``).
_STRUCTURAL = re.compile(r"(?:^|_)(?:id|ids|hash)$")
