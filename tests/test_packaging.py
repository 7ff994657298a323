"""The wheel ships corpus/, schemas/, adapters/ and the semantics document.

It is built once and unpacked; the package is then imported from there, in a
subprocess, and must find every data file in the wheel and none outside it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(REPO),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("streamproof-*.whl")
    target = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def test_wheel_carries_the_data(unpacked_wheel: Path) -> None:
    data = unpacked_wheel / "streamproof" / "_data"
    for name in (
        "corpus/VERSION",
        "corpus/FORMAT",
        "corpus/manifest.json",
        "corpus/.gitattributes",
        "corpus/LICENSE",
        "schemas/case.schema.json",
        "schemas/results.schema.json",
        "adapters/reference.py",
        "docs/semantics.md",
    ):
        assert (data / name).is_file(), name
    assert not list(data.rglob("__pycache__"))


def test_installed_wheel_finds_its_own_data_and_validates(unpacked_wheel: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(unpacked_wheel)}
    script = (
        "import streamproof, sys\n"
        "from streamproof.resources import data_path\n"
        "from streamproof.cli import main\n"
        "assert str(data_path('corpus')).startswith(sys.argv[1]), data_path('corpus')\n"
        "sys.exit(main(['validate']) or main(['run', '--transport', 'whole']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(unpacked_wheel)],
        env=env,
        cwd=unpacked_wheel,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failed" in proc.stdout
