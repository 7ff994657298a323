"""The corpus: cases on disk, their schemas, the quirk catalogue, ``validate``.

Layer 2. ``cases`` loads cases and computes the corpus identity (manifest
digests), ``schemas`` compiles the JSON Schemas of ``schemas/``, ``quirks``
reads the quirk catalogue and writes its tables, ``validate`` is the deep
check behind ``streamproof validate`` and ``manifest``. May import
``streamproof.reference`` and the package's foundation modules
(``errors``, ``resources``).
"""

from __future__ import annotations

from ..errors import CorpusError
from .cases import (
    SEVERITIES,
    Case,
    Corpus,
    default_root,
    expectation_digest,
    file_digests,
    load_case,
    load_corpus,
    scan,
    tree_digest,
)

__all__ = [
    "SEVERITIES",
    "Case",
    "Corpus",
    "CorpusError",
    "default_root",
    "expectation_digest",
    "file_digests",
    "load_case",
    "load_corpus",
    "scan",
    "tree_digest",
]
