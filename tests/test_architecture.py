"""The package's layers, read from the modules' own import statements.

docs/architecture.md draws the pipeline; this test keeps the code to it: a
layer imports only layers below it, nothing imports the old-path modules kept
for users, there is no import cycle, no module is over 450 lines, and the
cheap entry points (``--help``, ``list``, the adapter worker, the reference
parser) load no more than they need.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import streamproof

PACKAGE = Path(streamproof.__file__).resolve().parent

# Lowest first. A module may import its own layer and the layers before it.
LAYERS = (
    "foundation",
    "reference",
    "corpus",
    "harness",
    "checks",
    "fuzz",
    "reporting",
    "live",
    "app",
)
FOUNDATION = {"__about__", "atomic", "errors", "resources"}
# The module paths users had before the layers: thin re-exports, imported by nobody inside.
OLD_PATHS = {"adapter", "chat", "chunking", "comparison", "nodejs", "runner", "sse", "worker"}
ENTRY = {"__init__", "__main__"}
MAX_LINES = 450
THIRD_PARTY_HEAVY = ("jsonschema", "referencing", "pytest", "jinja2", "aiohttp", "httpx", "xdist")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _layer(module: str) -> str:
    head = module.split(".")[0]
    if head in FOUNDATION:
        return "foundation"
    if head in ("cli", "plugin"):
        return "app"
    if head in OLD_PATHS or head in ENTRY:
        return "entry"
    assert head in LAYERS, f"{module}: in no layer; add it to docs/architecture.md and here"
    return head


def _imports(module: str) -> set[str]:
    """Every streamproof module that ``module`` imports, anywhere in its body."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == "streamproof":
                target = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                name = ".".join([*target, alias.name])
                found.add(name if name in MODULES else ".".join(target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "streamproof":
                    found.add(".".join(alias.name.split(".")[1:]))
    return {m for m in found if m in MODULES and m != module}


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_layer_imports_only_layers_below_it(module: str) -> None:
    layer = _layer(module)
    for imported in sorted(_imports(module)):
        target = _layer(imported)
        if layer == "entry":
            assert target != "entry" or imported == "" or imported.startswith("__"), (
                f"{module} imports {imported}"
            )
            continue
        assert target != "entry", f"{module} imports the old path {imported}: use the new one"
        assert LAYERS.index(target) <= LAYERS.index(layer), (
            f"{module} ({layer}) imports {imported} ({target}), a layer above it"
        )


def test_no_import_cycle() -> None:
    graph = {m: _imports(m) for m in MODULES}
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for nxt in sorted(graph[module]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt] if nxt in path else [module, nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_the_reference_parser_imports_the_standard_library_only() -> None:
    for module, path in MODULES.items():
        if _layer(module) != "reference":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top == "__future__", (
                    f"{module} imports {name}, not in the standard library"
                )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_the_line_limit(module: str) -> None:
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module}: {lines} lines; split it where its parts differ"


def test_no_two_modules_differ_only_by_a_suffix() -> None:
    """Siblings such as ``lint`` and ``linting`` say nothing of which does what."""
    by_parent: dict[str, set[str]] = {}
    for module in MODULES:
        parent, _, leaf = module.rpartition(".")
        by_parent.setdefault(parent, set()).add(leaf)
    for parent, leaves in by_parent.items():
        for a in leaves:
            for b in leaves:
                suffix = b[len(a) :].lstrip("_")
                if a != b and b.startswith(a) and suffix in ("s", "ing", "er", "ed", "2"):
                    pytest.fail(f"{parent or 'streamproof'}: {a!r} and {b!r} differ by a suffix")


def _loaded_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter has loaded after ``code``."""
    script = (
        code
        + "\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    ("what", "code"),
    [
        (
            "--help",
            "import contextlib\nfrom streamproof.cli import main\n"
            "with contextlib.suppress(SystemExit):\n    main(['--help'])",
        ),
        ("the adapter worker", "import streamproof.harness.worker"),
        ("the old worker path", "import streamproof.worker"),
        ("import streamproof", "import streamproof"),
        ("the reference parser", "import streamproof.reference"),
    ],
)
def test_cheap_entry_points_load_no_heavy_library(what: str, code: str) -> None:
    heavy = _loaded_after(code) & set(THIRD_PARTY_HEAVY)
    assert not heavy, f"{what} loads {sorted(heavy)}"


def test_the_reference_parser_loads_no_third_party_module() -> None:
    # What site itself preloads (an editable install's finder, setuptools' hook) is no import.
    bare = _loaded_after("pass")
    loaded = _loaded_after("import streamproof.reference") - bare
    third_party = {m for m in loaded if m not in sys.stdlib_module_names} - {"streamproof"}
    assert not third_party, sorted(third_party)


def test_list_loads_what_it_uses_and_no_more() -> None:
    loaded = _loaded_after("from streamproof.cli import main\nmain(['list'])")
    assert not loaded & {"pytest", "jinja2", "aiohttp", "httpx", "xdist"}, sorted(loaded)


def test_the_old_module_paths_still_work() -> None:
    from streamproof.adapter import load_sibling
    from streamproof.chat import StreamAccumulator
    from streamproof.comparison import compare
    from streamproof.corpus import load_corpus
    from streamproof.reference import ResponseReader, read_response
    from streamproof.sse import SSEDecoder

    assert callable(load_sibling) and callable(compare) and callable(load_corpus)
    assert callable(read_response)
    assert ResponseReader and SSEDecoder and StreamAccumulator
    for name in streamproof.__all__:
        assert getattr(streamproof, name) is not None
    done = subprocess.run(
        [sys.executable, "-m", "streamproof.worker"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "usage:" in done.stderr
