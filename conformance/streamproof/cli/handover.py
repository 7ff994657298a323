"""What ``streamproof run`` hands to the plugin's session in the same process."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..corpus.cases import Corpus
from ..harness.protocol import AdapterProcess

__all__ = ["handed_over"]


def handed_over(
    config: pytest.Config, spec: str, corpus_dir: str | None
) -> tuple[Corpus | None, AdapterProcess | None]:
    """The corpus and the started adapter process ``streamproof run`` hands over.

    ``streamproof run`` has loaded the corpus and started the adapter in this
    same process before pytest starts; the plugin takes them over rather than
    doing both again. Anything else (plain pytest, an xdist worker, another
    corpus) finds nothing and loads its own.
    """
    if getattr(config, "workerinput", None) is not None:
        return None, None
    for plugin in config.pluginmanager.get_plugins():
        corpus = getattr(plugin, "streamproof_corpus", None)
        if isinstance(corpus, Corpus) and corpus_dir and Path(corpus_dir).resolve() == corpus.root:
            process = getattr(plugin, "streamproof_process", None)
            plugin.streamproof_process = None  # one session owns it
            if isinstance(process, AdapterProcess) and process.spec == spec:
                return corpus, process
            return corpus, None
    return None, None
