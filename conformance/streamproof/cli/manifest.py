"""``streamproof manifest``: rewrite corpus/manifest.json from the files."""

from __future__ import annotations

import argparse

from ..corpus.cases import default_root, load_corpus
from ..corpus.validate import write_manifest
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    root = (args.corpus or default_root()).resolve()
    load_corpus(root)  # never digest a corpus that does not load
    manifest = write_manifest(root)
    print(
        f"wrote {root / 'manifest.json'}: {len(manifest['files'])} files, "
        f"sha256 {manifest['sha256']}"
    )
    return 0
