"""Records read back from the memory's own tables, built without validating them again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound=BaseModel)


def stored_record(record_type: type[ModelT], names: Sequence[str], row: Sequence[Any]) -> ModelT:
    """A record read back from the memory's own tables, whose values were validated when they were
    written: built from the row's values in the order of ``names`` without validating them again.

    When ``names`` are the record's fields (or all but some with a plain default), it is made as
    ``model_construct`` would make it, without its per-field search for aliases and defaults (most of
    the cost of the few dozen records a context reads)."""
    return stored_mapping(record_type, dict(zip(names, row)))


def stored_mapping(record_type: type[ModelT], given: dict[str, Any]) -> ModelT:
    """:func:`stored_record` from the values by name (a JSON object read back); ``given`` becomes the
    record's own: the caller lets go of it."""
    names = tuple(given)
    key = (record_type, names)
    plan = _DIRECT.get(key, False)
    if plan is False:
        plan = _DIRECT[key] = _direct_plan(record_type, names)
    if plan is None:
        return record_type.model_construct(**given)
    fields, every = plan
    record = record_type.__new__(record_type)
    _set(record, "__dict__", given if fields == names else every | given)
    _set(record, "__pydantic_fields_set__", set(names))
    _set(record, "__pydantic_extra__", None)
    _set(record, "__pydantic_private__", None)
    return record


_set = object.__setattr__  # past the record's own (frozen) __setattr__


_DIRECT: dict[tuple[type[BaseModel], tuple[str, ...]], tuple[tuple[str, ...], dict[str, Any]] | None] = {}


def _direct_plan(record_type: type[BaseModel], names: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, Any]] | None:
    """The record's fields in order, and each field with the default of those ``names`` lacks (in the fields'
    order, for the values given to be put over), when ``model_construct`` from ``names`` would only set them:
    every name a field, every other field with a plain (immutable) default, no aliases, extra fields,
    private attributes or post-init to look after."""
    fields = record_type.model_fields
    missing = [name for name in fields if name not in names]
    if set(names) - set(fields) or record_type.__pydantic_root_model__ or record_type.__pydantic_post_init__ \
            or record_type.__private_attributes__ or record_type.model_config.get("extra") == "allow" \
            or any(field.alias is not None or field.validation_alias is not None for field in fields.values()):
        return None
    defaults = {name: fields[name].default for name in missing}
    if any(fields[name].default_factory is not None or not isinstance(defaults[name], str | int | float | bool | None)
           or fields[name].is_required() for name in missing):
        return None
    return tuple(fields), {name: defaults.get(name) for name in fields}
