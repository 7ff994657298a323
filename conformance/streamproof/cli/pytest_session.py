"""``streamproof run`` drives pytest with the plugin, in-process and sealed off.

The run does not read the user's pytest configuration nor load their
plugins: it points pytest at an empty folder with an empty ini file, turns
plugin autoloading off and names the plugins it needs, and leaves out those of
pytest's own it has no use for (its terminal reporter too).
What pytest still prints is swallowed; the run shows its own progress, and its
exit status is computed from the results, never taken from pytest.

pytest writes the JUnit XML and the pytest-html report to temporary files
beside their targets, staged in the run's batch of outputs (``atomic.Batch``):
they are moved into place with the run's other outputs, and only when every
case run finished, so an interrupted or broken run leaves neither (nor a stale half).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..atomic import Batch
from ..corpus.cases import Corpus
from ..harness.engine import Result
from ..harness.protocol import AdapterProcess
from ..reporting.terminal import Progress
from .run_options import RunInterrupted, RunOptions

__all__ = ["run_through_pytest"]


class _Observer:
    """Shows progress and keeps the results the plugin gathered."""

    def __init__(self, total: int, *, every: bool = False) -> None:
        self.progress = Progress(total, sys.stderr, every=every)
        self.results: list[Result] = []
        self.config: pytest.Config | None = None
        self.interrupted = False
        self.streamproof_corpus: Corpus | None = None
        self.streamproof_process: AdapterProcess | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # pytest caught a Ctrl-C (or a SIGTERM the run made one); pytest.exit() comes here too
        self.interrupted = self.interrupted or isinstance(excinfo.value, KeyboardInterrupt)
        if isinstance(excinfo.value, pytest.exit.Exception):
            print(excinfo.value.msg.removeprefix("streamproof: "))  # shown by a stopped run

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        session = self._session()
        gathered = session.results if session is not None else []
        while len(self.results) < len(gathered):  # the plugin has one more result
            result = gathered[len(self.results)]
            self.results.append(result)
            self.progress.step(result)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        session = self._session()
        if session is not None:
            self.results = list(session.results)

    def _session(self) -> Any:
        if self.config is None:
            return None
        return self.config.pluginmanager.get_plugin("streamproof-session")


# pytest's own plugins that a sealed run has no use for: its items have no
# fixtures, no assertions to rewrite, no logging or warnings to show (pytest's
# output is swallowed), and no option of ``run`` reaches them. Each would cost
# its import, and its hooks on every case run. (``faulthandler`` stays: it is
# what shows a traceback if this process itself crashes.)
_UNUSED_PLUGINS = (
    "cacheprovider",
    "assertion",
    "debugging",
    "doctest",
    "legacypath",
    "logging",
    "monkeypatch",
    "pastebin",
    "recwarn",
    "setuponly",
    "setupplan",
    "stepwise",
    "subtests",
    "threadexception",
    "tmpdir",
    "unittest",
    "unraisableexception",
    "warnings",
)


def _arguments(options: RunOptions, folder: Path, staged: dict[Path, Path]) -> list[str]:
    args = [
        "-c",
        str(folder / "pytest.ini"),
        "--rootdir",
        str(folder),
        "--capture=no",
        *(f"-pno:{name}" for name in _UNUSED_PLUGINS),
        # pytest's terminal reporter keeps every report to the end, for a
        # summary nobody would see here (what pytest prints is swallowed).
        "-pno:terminal",
        *([] if options.junit else ["-pno:junitxml"]),
        "-p",
        "streamproof.plugin",
        "--streamproof",
        options.spec,
        "--streamproof-transport",
        ",".join(options.transports),
        *(
            ["--streamproof-seeds", ",".join(map(str, options.seeds))]
            if len(options.seeds) > 1
            else ["--streamproof-seed", str(options.seed)]
        ),
        "--streamproof-fail-on",
        options.fail_on,
    ]
    for glob in options.cases:
        args += ["--streamproof-case", glob]
    for provider in options.providers:
        args += ["--streamproof-provider", provider]
    if options.keyword:
        args += ["--streamproof-keyword", options.keyword]
    if options.shard is not None:
        args += ["--streamproof-shard", str(options.shard)]
    if options.exitfirst:
        args += ["--exitfirst"]
    if options.corpus:
        args += ["--streamproof-corpus", str(options.corpus)]
    if options.expect:
        args += ["--streamproof-expect", str(options.expect)]
    if options.timeout:
        args += ["--streamproof-timeout", str(options.timeout)]
    if options.http:
        args += ["--streamproof-http"]
    if options.trace:
        args += ["--streamproof-trace", str(options.trace)]
    # A plugin is loaded only for the run that uses it: each costs its
    # import and its hooks on every case run.
    if options.jobs > 1:  # N adapter processes under this one session (harness.pool)
        args += ["--streamproof-jobs", str(options.jobs)]
    if options.html:
        args += ["-p", "pytest_metadata.plugin", "-p", "pytest_html.plugin"]
        args += ["--html", str(staged[options.html]), "--self-contained-html"]
    if options.junit:
        args += ["--junitxml", str(staged[options.junit])]
    return [*args, str(folder)]


@contextlib.contextmanager
def _sealed() -> Iterator[Path]:
    saved = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        with tempfile.TemporaryDirectory(prefix="streamproof-") as name:
            folder = Path(name)
            (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
            yield folder
    finally:
        if saved is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved


def run_through_pytest(
    options: RunOptions,
    total: int,
    *,
    corpus: Corpus | None = None,
    process: AdapterProcess | None = None,
    outputs: Batch,
) -> tuple[list[Result], int, str]:
    """Run the plan; return the results, pytest's exit code and its swallowed output.

    The HTML report and JUnit XML are staged in ``outputs``, to be put in place
    with the run's other outputs; they are withdrawn unless every case run finished.
    ``RunInterrupted`` when a ``KeyboardInterrupt`` stopped the run.
    """
    observer = _Observer(total, every=options.verbosity > 0)
    # Handed over to the plugin's session (plugin.py, ``_handed_over``).
    observer.streamproof_corpus = corpus
    observer.streamproof_process = process
    out = io.StringIO()
    staged: dict[Path, Path] = {}
    try:
        for target in (options.html, options.junit):
            if target is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                staged[target] = outputs.stage(target)
        with _sealed() as folder, contextlib.redirect_stdout(out):
            code = pytest.main(_arguments(options, folder, staged), plugins=[observer])
        if observer.interrupted:
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise RunInterrupted(len(observer.results), total) from None
    finally:
        observer.progress.done()
        if len(observer.results) != total:
            outputs.withdraw(*staged)
    return observer.results, int(code), out.getvalue()
