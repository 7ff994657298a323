"""The pytest plugin: one test per case × transport.

``pytest --streamproof=SPEC`` adds the corpus to any test session, so ``-k``,
``-x``, ``--lf``, ``-n`` (xdist), ``--junitxml`` and ``--html`` work as usual.
Nothing is registered unless the option is given. ``streamproof run`` drives
the same plugin and the same engine. ``--streamproof-jobs N`` runs N adapter
processes under one session (``harness.pool``), where ``-n N`` starts N
sessions, each loading the corpus and collecting every item.

``options`` declares the command-line options, ``session`` holds one pytest
process's state (corpus, engine, results, the HTML report's hooks), ``items``
the collector and the test item of one case run.
"""

from __future__ import annotations

import pytest

from .items import StreamproofFailure, StreamproofItem
from .options import pytest_addoption
from .session import StreamproofSession

__all__ = [
    "StreamproofFailure",
    "StreamproofItem",
    "StreamproofSession",
    "pytest_addoption",
    "pytest_configure",
]


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("streamproof"):
        config.pluginmanager.register(StreamproofSession(config), "streamproof-session")
