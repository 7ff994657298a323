"""The one place HTML templates are loaded: ``streamproof/reporting/templates`` through jinja2.

Every page is rendered from a template with autoescaping on, never built
from strings in Python. ``trim`` drops the newline after a block tag and the
indentation before one, which the larger pages use to keep their output tidy.
"""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, Template, select_autoescape

__all__ = ["template"]


@cache
def _environment(trim: bool) -> Environment:
    return Environment(
        loader=PackageLoader("streamproof.reporting", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=trim,
        lstrip_blocks=trim,
    )


def template(name: str, *, trim: bool = True) -> Template:
    """The template ``name`` from ``streamproof/reporting/templates``."""
    return _environment(trim).get_template(name)
