"""Adapters: loading one from a SPEC and handing it a response (docs/protocol.md).

The built-in adapters are files under ``adapters/`` and are loaded by path,
exactly like a user's file: there is no shortcut for our own.

What an adapter can import follows the command that would run it alone
(docs/adapters.md, "What an adapter can import"): a user's file
gets its folder first on ``sys.path``, as ``python file.py`` would; a module
``pkg.mod`` gets the working folder first, as ``python -m pkg.mod`` would; a
built-in adapter gets nothing, so ``adapters/litellm.py`` never shadows the
``litellm`` it drives.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import AdapterError
from ..resources import data_path

__all__ = [
    "CAPABILITIES",
    "V1_CAPABILITIES",
    "Adapter",
    "AdapterError",
    "ReplayResponse",
    "load_adapter",
    "load_sibling",
]

#: The fourteen capabilities of the outcome's first version (contract §3): what
#: an adapter that declares none has, also now that the outcome has grown, so
#: that no adapter is judged on parts it never claimed.
V1_CAPABILITIES = frozenset(
    {
        "content",
        "role",
        "finish_reason",
        "usage",
        "tool_calls",
        "reasoning",
        "refusal",
        "multiple_choices",
        "stream_error",
        "http_error",
        "truncation",
        "non_streaming",
        "metadata",
        "incremental",
    }
)

#: Every capability name there is: the first fourteen and the parts of the chat
#: format added since (docs/semantics.md §6.8 to §6.12), each opt-in.
CAPABILITIES = V1_CAPABILITIES | frozenset(
    {"function_call", "custom_tool_calls", "logprobs", "audio", "annotations"}
)


class ReplayResponse:
    """The response an adapter's ``parse`` receives.

    ``iter_bytes()`` and ``aiter_bytes()`` yield the body in the transport's
    chunks, once: a second iteration yields only what the first left unread.
    ``bytes_delivered`` counts the body bytes handed out so far.
    """

    def __init__(
        self,
        *,
        status: int,
        headers: dict[str, str],
        request: dict[str, Any],
        case_id: str,
        transport: str,
        body: bytes,
        ends: list[int],
    ) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.request = request
        self.case_id = case_id
        self.transport = transport
        self.bytes_delivered = 0
        self._body = body
        self._ends = ends
        self._next = 0  # the index of the next read in ``ends``

    def _reads(self) -> Iterator[bytes]:
        # Like a socket, the body is read once: iterating again (as clients
        # do to drain a response) goes on from where the last iteration
        # stopped and yields what is left, often nothing.
        while self._next < len(self._ends):
            start = self._ends[self._next - 1] if self._next else 0
            end = self._ends[self._next]
            self._next += 1
            self.bytes_delivered = end
            yield self._body[start:end]

    def iter_bytes(self) -> Iterator[bytes]:
        yield from self._reads()

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        import asyncio  # here, not at the top: a sync adapter's worker never pays for it

        for data in self._reads():
            yield data
            await asyncio.sleep(0)  # let other tasks run between reads, as a socket would


@dataclass(frozen=True)
class Adapter:
    """A loaded in-process adapter."""

    spec: str
    name: str
    version: str
    capabilities: frozenset[str]
    parse: Callable[[ReplayResponse], Any]
    call: Callable[[str, dict[str, Any]], Any] | None = None

    def run(self, response: ReplayResponse) -> Any:
        """Call ``parse`` (sync or async) and return what it returned."""
        if inspect.iscoroutinefunction(self.parse):
            import asyncio

            return asyncio.run(self.parse(response))
        return self.parse(response)

    def run_call(self, base_url: str, request: dict[str, Any]) -> Any:
        """Call ``call`` (sync or async): a real client against ``base_url``."""
        if self.call is None:
            raise AdapterError(f"{self.spec}: defines no call(base_url, request)")
        if inspect.iscoroutinefunction(self.call):
            import asyncio

            return asyncio.run(self.call(base_url, request))
        return self.call(base_url, request)


def builtin_names() -> list[str]:
    """Python adapter files under adapters/, and the Node adapters."""
    from .nodejs import BUILTIN  # here: the worker of a Python adapter never needs it

    python = {
        p.stem.replace("_", "-")
        for p in data_path("adapters").glob("*.py")
        if not p.name.startswith("_")
    }
    return sorted(python | set(BUILTIN))


def _module_from_file(path: Path) -> ModuleType:
    name = f"streamproof_adapter_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AdapterError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_sibling(adapter_file: str, name: str) -> ModuleType:
    """Load ``name``, a file beside an adapter, by path: how adapters share code.

    Adapters are loaded by path, not imported as a package, so a helper beside
    them (``_chunk_reader.py``) is loaded the same way.
    """
    return _module_from_file(Path(adapter_file).resolve().with_name(name))


def _put_first(folder: str) -> None:
    """Put ``folder`` first on ``sys.path``, where ``python`` puts the script's folder.

    For the life of the process, not just the load: a parser that imports
    lazily, inside ``parse``, must find the same modules.
    """
    if not sys.path or sys.path[0] != folder:
        sys.path.insert(0, folder)


def _shown(entry: str) -> str:
    """A ``sys.path`` entry, shortened: relative inside the working folder, ``~`` for home."""
    path = os.path.abspath(entry or os.curdir)
    here = os.getcwd()
    home = os.path.expanduser("~")
    if path == here:
        return "."
    if path.startswith(here + os.sep):
        return os.path.relpath(path, here)
    if home not in ("", os.sep) and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


#: An import error names this many folders of ``sys.path``, the first that exist.
SEARCHED_SHOWN = 3


def _searched() -> str:
    """Where an import looked: the first few existing entries of ``sys.path``, shortened."""
    entries = [entry for entry in sys.path if os.path.exists(entry or os.curdir)]
    shown = ", ".join(_shown(entry) for entry in entries[:SEARCHED_SHOWN])
    more = len(entries) - SEARCHED_SHOWN
    return f"searched {shown}" + (f" and {more} more on sys.path" if more > 0 else "")


def _import(spec: str) -> ModuleType:
    builtins = data_path("adapters")
    builtin = builtins / f"{spec.replace('-', '_')}.py"
    if builtin.exists() and "/" not in spec:
        return _module_from_file(builtin)
    if spec.endswith(".py") or "/" in spec:
        path = Path(spec)
        if not path.is_file():
            raise AdapterError(f"{spec}: no such adapter file")
        path = path.resolve()
        # A built-in adapter named by its path is still a built-in: adapters/
        # first on the path would put adapters/litellm.py in place of litellm.
        if path.parent != builtins.resolve():
            _put_first(str(path.parent))
        return _module_from_file(path)
    if "" not in sys.path and os.getcwd() not in sys.path:
        _put_first(os.getcwd())
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name and spec.startswith(exc.name):
            known = ", ".join(builtin_names())
            raise AdapterError(
                f"{spec!r} is not a built-in adapter ({known}), a file or an importable module "
                f"({_searched()})"
            ) from None
        raise


def load_adapter(spec: str) -> Adapter:
    """Load ``spec``: a built-in name, ``path/to/adapter.py`` or ``pkg.mod``."""
    if spec.startswith("cmd:"):
        raise AdapterError("subprocess adapters (cmd:) are not supported by this version")
    try:
        module = _import(spec)
    except AdapterError:
        raise
    except ImportError as exc:
        # A module not found: say where it was looked for, the path being the usual suspect.
        where = f" ({_searched()})" if isinstance(exc, ModuleNotFoundError) else ""
        raise AdapterError(f"{spec}: cannot import: {exc}{where}") from None
    except Exception as exc:  # the adapter's own import-time failure
        raise AdapterError(f"{spec}: failed while loading: {type(exc).__name__}: {exc}") from None
    parse = getattr(module, "parse", None)
    call = getattr(module, "call", None)
    if not callable(parse):
        raise AdapterError(f"{spec}: defines no parse(response) function")
    if call is not None and not callable(call):
        raise AdapterError(f"{spec}: call is not a function")
    declared = getattr(module, "CAPABILITIES", V1_CAPABILITIES)
    capabilities = frozenset(declared)
    unknown = sorted(capabilities - CAPABILITIES)
    if unknown:
        raise AdapterError(f"{spec}: unknown capabilities {unknown}")
    return Adapter(
        spec=spec,
        name=str(getattr(module, "NAME", Path(spec).stem if spec.endswith(".py") else spec)),
        version=str(getattr(module, "VERSION", "unknown")),
        capabilities=capabilities,
        parse=parse,
        call=call,
    )
