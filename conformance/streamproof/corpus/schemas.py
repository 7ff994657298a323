"""The JSON Schemas of cases, outcomes and results, loaded once.

``jsonschema`` is imported on the first check, so a run whose checks are all
remembered (``corpus.checked``) never pays for it.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

from ..resources import data_path

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry

__all__ = ["schema_errors", "validator"]

_NAMES = ("case", "outcome", "results", "expectations", "quirks")


@cache
def _registry() -> Registry:
    from referencing import Registry, Resource

    resources = []
    for name in _NAMES:
        path = data_path("schemas") / f"{name}.schema.json"
        if path.exists():
            schema = json.loads(path.read_text(encoding="utf-8"))
            resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    """The validator of ``schemas/<name>.schema.json``."""
    from jsonschema import Draft202012Validator

    path = data_path("schemas") / f"{name}.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    return Draft202012Validator(schema, registry=_registry())


def schema_errors(name: str, instance: Any) -> str | None:
    """One line describing the most relevant schema error, or ``None``."""
    from jsonschema.exceptions import best_match

    error = best_match(validator(name).iter_errors(instance))
    if error is None:
        return None
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where.lstrip('.') or '(top level)'}: {error.message}"
