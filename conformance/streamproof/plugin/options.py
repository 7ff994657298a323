"""The plugin's command-line options and how their values are read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ..cli.inputs import MAX_JOBS, MAX_TIMEOUT, check_jobs, check_timeout
from ..corpus.cases import SEVERITIES
from ..errors import UsageError
from ..harness.sharding import Shard
from ..harness.transports import (
    DEFAULT_SEED,
    TRANSPORTS,
    draw_seed,
    parse_seed,
    parse_seeds,
    parse_transports,
)

__all__ = ["pytest_addoption", "seeds_of", "shard_of", "transports_of"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamproof", "streamproof conformance suite")
    group.addoption(
        "--streamproof",
        metavar="SPEC",
        help="score adapter SPEC (built-in name, file, module or cmd:…) "
        "with one test per case × transport",
    )
    group.addoption(
        "--streamproof-transport",
        default="all",
        metavar="LIST",
        help=f"'all' or a comma list of {', '.join(TRANSPORTS)}",
    )
    group.addoption(
        "--streamproof-case",
        action="append",
        default=[],
        metavar="GLOB",
        help="only cases whose id matches (repeatable)",
    )
    group.addoption(
        "--streamproof-provider",
        action="append",
        default=[],
        metavar="NAME",
        help="only this provider's cases (repeatable)",
    )
    group.addoption(
        "--streamproof-keyword",
        metavar="EXPR",
        help="only runs whose id, title, tags, provider, severity or transport match EXPR",
    )
    group.addoption(
        "--streamproof-shard",
        metavar="K/N",
        help="only shard K of N of the selected runs (each run is in exactly one shard)",
    )
    group.addoption("--streamproof-corpus", metavar="DIR", help="another corpus folder")
    group.addoption("--streamproof-expect", metavar="FILE", help="known failures (JSON)")
    group.addoption(
        "--streamproof-timeout",
        type=_checked(float, check_timeout, "--streamproof-timeout"),
        metavar="SECONDS",
        help=f"per case-run timeout, at most {MAX_TIMEOUT} (default: scaled with the body's size)",
    )
    group.addoption(
        "--streamproof-seed",
        default=str(DEFAULT_SEED),
        metavar="N|random",
        help=f"seed of the random transport (default: {DEFAULT_SEED}; "
        "'random' draws one and prints it)",
    )
    group.addoption(
        "--streamproof-seeds",
        metavar="SPEC",
        help="run the random transport once per seed, e.g. 1-20 or 1,5,9; a case that "
        "fails under some seeds only is reported with them",
    )
    group.addoption(
        "--streamproof-http",
        action="store_true",
        help="score the adapter's call(base_url, request) over real HTTP against a replay "
        "server on 127.0.0.1",
    )
    group.addoption(
        "--streamproof-trace", metavar="FILE", help="append the protocol traffic here (JSON lines)"
    )
    group.addoption(
        "--streamproof-jobs",
        type=_checked(int, check_jobs, "--streamproof-jobs"),
        default=1,
        metavar="N",
        help="run N adapter processes in parallel, ahead of the tests that report them "
        f"(at most {MAX_JOBS})",
    )
    group.addoption(
        "--streamproof-fail-on",
        choices=SEVERITIES,
        default="may",
        help="lowest severity whose failures fail (lower ones are xfail)",
    )


def _checked(kind: type, check: Callable[[Any, str], Any], option: str) -> Callable[[str], Any]:
    """A ``type=`` reading ``kind`` and checking it as ``run`` does: out of range, a usage error."""

    def read(text: str) -> Any:
        try:
            return check(kind(text), option)  # (a ValueError of kind(): argparse's message)
        except UsageError as exc:
            raise pytest.UsageError(f"streamproof: {exc}") from None

    read.__name__ = kind.__name__  # argparse names the type in "invalid int value: 'x'"
    return read


def seeds_of(config: pytest.Config) -> tuple[int, list[int]]:
    """The seed and the seeds of the random transport (``--streamproof-seed[s]``)."""
    spec = config.getoption("streamproof_seeds")
    try:
        if spec is not None:
            seeds = parse_seeds(spec)
            return seeds[0], seeds
        seed = parse_seed(config.getoption("streamproof_seed"))
    except ValueError as exc:
        raise pytest.UsageError(f"streamproof: {exc}") from None
    seed = draw_seed() if seed is None else seed
    return seed, [seed]


def shard_of(value: str | None) -> Shard | None:
    """The shard of ``--streamproof-shard`` (``None``: the whole plan)."""
    if value is None:
        return None
    try:
        return Shard.parse(value)
    except ValueError as exc:
        raise pytest.UsageError(f"streamproof: --streamproof-shard: {exc}") from None


def transports_of(value: str) -> list[str]:
    try:
        return parse_transports(value)
    except ValueError as exc:
        raise pytest.UsageError(f"streamproof: {exc}") from None
