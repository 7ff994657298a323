"""The machinery of scripts/history: registries, one environment per release, scoring.

A ``Registry`` lists a package's final releases (oldest first) and installs
one release into a folder of its own, returning what the run needs: the
adapter spec that drives that environment and the resolved version of every
package the install pulled in. ``PyPI`` makes a venv per release with the
standard ``venv`` module and pip; ``Npm`` a ``node_modules`` per release with
npm, beside a copy of the shipped Node adapters, run by the Node runtime that
``streamproof setup-node`` installed. Both use the registries' ordinary
clients (``pip index versions``, ``npm view``). The tests give a stand-in.

``history`` scores the last N releases of each library and writes one record
per release (``streamproof.reporting.history.record_of``) to
``<out>/<adapter>/<version>.json``; a release already scored on this corpus
digest is not scored again.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from streamproof.__about__ import __version__
from streamproof.reporting.history import RECORD_FORMAT, dump_record, record_of, version_key

ROOT = Path(__file__).resolve().parent.parent
PY = os.environ.get("PYTHON") or sys.executable
_SAFE_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
_FINAL = re.compile(r"^\d+(\.\d+)*$")  # a final release: no pre-release or dev part
_INSTALL_TIMEOUT = 1800.0


class InstallError(Exception):
    """A release could not be installed (a registry or network problem: tried again next time)."""


@dataclass(frozen=True)
class Library:
    """A scored library: its built-in adapter, its registry and package."""

    adapter: str
    registry: str  # "pypi" or "npm"
    package: str
    companion: str = ""  # npm: a package installed beside it, as of the release's date
    #: PyPI: what the adapter imports beside the library (the project's extras for it)
    extras: tuple[str, ...] = ()


LIBRARIES = {
    lib.adapter: lib
    for lib in (
        Library("openai-python", "pypi", "openai", extras=("httpx",)),
        Library("node-openai", "npm", "openai"),
        Library("litellm", "pypi", "litellm", extras=("httpx", "openai")),
        Library("langchain-openai", "pypi", "langchain-openai", extras=("httpx", "openai")),
        Library("vercel-ai", "npm", "ai", companion="@ai-sdk/openai-compatible"),
    )
}


@dataclass
class Installed:
    """A release in its environment: the spec that drives it, and what it pulled in."""

    spec: str
    resolved: dict[str, str]


class Registry(Protocol):
    def releases(self, library: Library) -> list[str]: ...

    def install(self, library: Library, version: str, folder: Path) -> Installed: ...


def _run(argv: Sequence[str], *, cwd: Path | None = None, what: str) -> str:
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_INSTALL_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"{what}: {exc}") from None
    if done.returncode != 0:
        lines = [x for x in (done.stderr + done.stdout).splitlines() if x.strip()]
        raise InstallError(f"{what} failed (exit {done.returncode}): {(lines or ['-'])[-1][:200]}")
    return done.stdout


def _worker_spec(python: Path, adapter: str) -> str:
    """Drive ``adapter`` in the interpreter ``python``, with this checkout's worker."""
    path = shlex.quote(f"PYTHONPATH={ROOT / 'conformance'}")
    return f"cmd:env {path} {shlex.quote(str(python))} -m streamproof.harness.worker {adapter}"


class PyPI:
    """Python releases: ``pip index versions``, and a venv per release."""

    def releases(self, library: Library) -> list[str]:
        out = _run(
            [PY, "-m", "pip", "index", "versions", library.package, "--disable-pip-version-check"],
            what=f"pip index versions {library.package}",
        )
        match = re.search(r"Available versions:\s*(.*)", out)
        found = [v.strip() for v in match[1].split(",")] if match else []
        return sorted((v for v in found if _FINAL.match(v)), key=version_key)

    def install(self, library: Library, version: str, folder: Path) -> Installed:
        python = folder / "bin" / "python"
        marker, asked = folder / "resolved.json", folder / "requested.txt"
        wanted = "\n".join([f"{library.package}=={version}", *library.extras]) + "\n"
        if not (marker.is_file() and asked.is_file() and asked.read_text() == wanted):
            if not python.is_file():
                shutil.rmtree(folder, ignore_errors=True)
                _run([PY, "-m", "venv", str(folder)], what=f"venv {folder}")
            pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
            _run([*pip, "install", "-q", *wanted.split()], what="pip install")
            listed = json.loads(_run([*pip, "list", "--format=json"], what="pip list"))
            resolved = {p["name"].lower(): p["version"] for p in listed}
            for tool in ("pip", "setuptools", "wheel"):
                resolved.pop(tool, None)
            marker.write_text(json.dumps(resolved, indent=1, sort_keys=True) + "\n")
            asked.write_text(wanted)
        resolved = json.loads(marker.read_text())
        return Installed(_worker_spec(python, library.adapter), resolved)


class Npm:
    """npm releases: ``npm view``, and a ``node_modules`` per release beside the adapters."""

    def __init__(self, runtime: Path | None = None) -> None:
        self._runtime = runtime

    def _view(self, spec: str, what: str) -> Any:
        return json.loads(_run(["npm", "view", spec, what, "--json"], what=f"npm view {spec}"))

    def releases(self, library: Library) -> list[str]:
        found = self._view(library.package, "versions")
        return sorted((v for v in found if _FINAL.match(v)), key=version_key)

    def _companion(self, library: Library, version: str) -> str:
        """The companion's newest final release published no later than ``version``."""
        published = self._view(library.package, "time")[version]
        times = self._view(library.companion, "time")
        dated = [(t, v) for v, t in times.items() if _FINAL.match(v) and t <= published]
        if not dated:
            raise InstallError(f"no {library.companion} release before {library.package} {version}")
        return max(dated, key=lambda tv: version_key(tv[1]))[1]

    def runtime(self) -> Path:
        if self._runtime is None:
            from streamproof.harness.nodejs import cache_dir, install, node_binary

            install(cache_dir())  # (nothing to do when streamproof setup-node ran)
            self._runtime = node_binary(cache_dir())
        return self._runtime

    def install(self, library: Library, version: str, folder: Path) -> Installed:
        marker = folder / "resolved.json"
        script = {"node-openai": "openai.mjs", "vercel-ai": "vercel-ai.mjs"}[library.adapter]
        if not marker.is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            sources = ROOT / "adapters" / "node"
            for path in sources.glob("*.mjs"):
                shutil.copyfile(path, folder / path.name)
            manifest = json.loads((sources / "package.json").read_text())
            manifest.pop("optionalDependencies", None)  # the runtime is the shared one
            manifest["dependencies"][library.package] = version
            if library.companion:
                manifest["dependencies"][library.companion] = self._companion(library, version)
            (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
            flags = ["--engine-strict=false", "--ignore-scripts", "--no-audit", "--no-fund"]
            _run(["npm", "install", *flags, "--loglevel=error"], cwd=folder, what="npm install")
            lock = json.loads((folder / "node_modules" / ".package-lock.json").read_text())
            resolved = {
                path.rsplit("node_modules/", 1)[1]: info["version"]
                for path, info in lock["packages"].items()
                if path and "version" in info
            }
            marker.write_text(json.dumps(resolved, indent=1, sort_keys=True) + "\n")
        resolved = json.loads(marker.read_text())
        runtime, path = shlex.quote(str(self.runtime())), shlex.quote(str(folder / script))
        return Installed(f"cmd:{runtime} {path}", resolved)


@dataclass
class Scored:
    """What became of one release."""

    library: str
    version: str
    outcome: str  # "scored", "not scorable", "kept" (already scored), "install failed"
    detail: str = ""


@dataclass
class History:
    """Score the last ``count`` releases of libraries into ``out``."""

    out: Path
    cache: Path
    registries: dict[str, Registry]
    corpus: Path | None = None
    transports: str = "whole"
    count: int = 12
    log: Callable[[str], None] = print
    done: list[Scored] = field(default_factory=list)
    # The corpus every release is scored on: a copy taken when the run starts, so that
    # an edit to the corpus meanwhile neither mixes two corpora nor reads as the adapter's fault.
    _snapshot: Path = Path()
    #: The version and digest of the corpus the run scored on (set by ``run``).
    claimed: dict[str, str] = field(default_factory=dict)

    def run(self, libraries: Sequence[Library]) -> list[Scored]:
        from streamproof.corpus import default_root, load_corpus

        with tempfile.TemporaryDirectory(prefix="streamproof-history-corpus-") as name:
            self._snapshot = Path(name) / "corpus"
            shutil.copytree(self.corpus or default_root(), self._snapshot)
            corpus = load_corpus(self._snapshot)  # (checks the copy against its manifest)
            self.claimed = {"version": corpus.version, "sha256": corpus.sha256}
            return self._run(libraries, corpus.sha256)

    def _run(self, libraries: Sequence[Library], digest: str) -> list[Scored]:
        for library in libraries:
            registry = self.registries[library.registry]
            try:
                releases = registry.releases(library)[-self.count :]
            except InstallError as exc:
                self.done.append(Scored(library.adapter, "-", "install failed", str(exc)))
                continue
            for version in releases:
                self.done.append(self._one(library, registry, version, digest))
                self.log(_line(self.done[-1]))
        return self.done

    def _one(self, library: Library, registry: Registry, version: str, digest: str) -> Scored:
        if not _SAFE_VERSION.match(version):
            return Scored(library.adapter, version, "install failed", "not a version name")
        target = self.out / library.adapter / f"{version}.json"
        if _current(target, digest, self.transports):
            return Scored(library.adapter, version, "kept")
        folder = self.cache / library.registry / library.package.replace("/", "+") / version
        try:
            installed = registry.install(library, version, folder)
        except InstallError as exc:
            return Scored(library.adapter, version, "install failed", str(exc))
        record = self._score(library, version, installed)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dump_record(record), encoding="utf-8")
        return Scored(library.adapter, version, record["status"], record.get("reason", ""))

    def _score(self, library: Library, version: str, installed: Installed) -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="streamproof-history-") as name:
            baseline = Path(name) / "baseline.json"
            argv = [PY, "-m", "streamproof", "run", "--adapter", installed.spec, "--no-html"]
            argv += ["-q", "--transport", self.transports, "--baseline", str(baseline)]
            argv += ["--corpus", str(self._snapshot)]
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            if done.returncode == 2 or not baseline.is_file():
                said = [x for x in done.stderr.splitlines() if x.strip()] or ["no output"]
                reason = said[-1].removeprefix("streamproof: ")[:300]
                return _unscorable(library, version, installed, self, reason, self.claimed)
            document = json.loads(baseline.read_text(encoding="utf-8"))
        record = record_of(
            document,
            library=library.adapter,
            package=library.package,
            version=version,
            resolved=installed.resolved,
            tool=__version__,
        )
        summary = record["summary"]
        if summary["total"] and summary["crashed"] == summary["total"]:
            first = next(r for r in document["results"] if r["verdict"] == "crash")
            reason = f"every case run crashed: {first.get('first_divergence', '')}"[:300]
            return _unscorable(library, version, installed, self, reason, document["corpus"])
        return record


def _unscorable(
    library: Library,
    version: str,
    installed: Installed,
    history: History,
    reason: str,
    corpus: dict[str, str],
) -> dict[str, Any]:
    return {
        "format": RECORD_FORMAT,
        "library": library.adapter,
        "package": library.package,
        "version": version,
        "resolved": dict(sorted(installed.resolved.items())),
        "tool": __version__,
        "corpus": dict(corpus),
        "transports": history.transports.split(","),
        "status": "not scorable",
        "reason": reason,
    }


def _current(target: Path, digest: str, transports: str) -> bool:
    """Whether ``target`` holds a record of this corpus digest and these transports."""
    try:
        record = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return record.get("corpus", {}).get("sha256") == digest and record.get(
        "transports"
    ) == transports.split(",")


def _line(scored: Scored) -> str:
    detail = f": {scored.detail}" if scored.detail else ""
    return f"{scored.library} {scored.version}: {scored.outcome}{detail}"
