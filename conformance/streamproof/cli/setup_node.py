"""``streamproof setup-node``: the Node adapters' runtime and libraries, into a cache."""

from __future__ import annotations

import argparse

from ..harness import nodejs

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: the cache is ``$STREAMPROOF_NODE_CACHE`` or ~/.cache/streamproof/node."""


def run(args: argparse.Namespace) -> int:
    cache = nodejs.cache_dir()
    nodejs.install(cache)
    print(f"node adapters ready in {cache} (runtime {nodejs.node_binary(cache)})")
    return 0
