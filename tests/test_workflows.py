"""action.yml, .github/workflows/nightly.yml and scripts/nightly, exercised locally.

The YAML files are checked against SchemaStore's github-action and
github-workflow schemas as vendored by the check-jsonschema package (a test
dependency), loaded as YAML 1.2 the way GitHub reads them (so ``on`` stays a
string). No GitHub runner is at hand, so the nightly workflow's own step is
run here through scripts/nightly.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
NIGHTLY = ROOT / ".github" / "workflows" / "nightly.yml"
SCRIPT = ROOT / "scripts" / "nightly"
ADAPTERS = Path(__file__).parent / "adapters"


def load_yaml(path: Path) -> Any:
    from ruamel.yaml import YAML  # check-jsonschema's YAML 1.2 parser

    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def vendored_schema(name: str) -> Draft7Validator:
    """SchemaStore's schema ``name`` as check-jsonschema vendors it."""
    folder = resources.files("check_jsonschema.builtin_schemas.vendor")
    schema = json.loads((folder / name).read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def schema_problems(validator: Draft7Validator, document: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
        for e in validator.iter_errors(document)
    ]


def nightly(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )


# action.yml


def test_action_is_a_valid_composite_action() -> None:
    action = load_yaml(ACTION)
    assert schema_problems(vendored_schema("github-actions.json"), action) == []
    assert action["runs"]["using"] == "composite"
    assert {"adapter", "expect", "transports", "fail-on", "python-version"} <= set(action["inputs"])
    assert {"streamproof-version", "streamproof-path"} <= set(action["inputs"])
    assert action["inputs"]["adapter"]["required"] is True


def _install_step(tmp_path: Path, **inputs: str) -> list[str]:
    """The action's install step, run with ``python`` and ``streamproof`` shims that
    log their arguments: the pip commands it would run, one line each."""
    shims, log = tmp_path / "bin", tmp_path / "calls.log"
    shims.mkdir(exist_ok=True)
    for name in ("python", "streamproof"):
        shim = shims / name
        shim.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n', encoding="utf-8")
        shim.chmod(0o755)
    log.write_text("", encoding="utf-8")
    step = next(s for s in load_yaml(ACTION)["runs"]["steps"] if s.get("id") == "install")
    env = {"SP_VERSION": "", "SP_PATH": "", "SP_EXTRAS": "", "SP_INSTALL": "", **inputs}
    assert set(env) == set(step["env"]), "every input of the step is given"
    proc = subprocess.run(
        ["bash", "-c", step["run"]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **os.environ,
            "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_ACTION_PATH": "/actions/streamproof",
            **env,
        },
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert (
        calls[0] == "python -m pip install --upgrade pip" and calls[-1] == "streamproof --version"
    )
    return calls[1:-1]


def test_action_installs_streamproof_from_its_own_checkout_unless_told(tmp_path: Path) -> None:
    """By default the streamproof of the ref in ``uses:``, never a name from the index,
    where it is not published; a path or a release when the inputs say so."""
    install = "python -m pip install"
    assert _install_step(tmp_path) == [f"{install} /actions/streamproof"]
    assert _install_step(tmp_path, SP_EXTRAS="openai,httpx-sse") == [
        f"{install} /actions/streamproof[openai,httpx-sse]"
    ]
    assert _install_step(tmp_path, SP_PATH="vendor/streamproof", SP_VERSION="9.9.9") == [
        f"{install} ./vendor/streamproof"
    ]
    assert _install_step(tmp_path, SP_PATH=".", SP_EXTRAS="openai") == [f"{install} .[openai]"]
    assert _install_step(tmp_path, SP_VERSION="0.1.0", SP_INSTALL="-e . -r req.txt") == [
        f"{install} streamproof==0.1.0",
        f"{install} -e . -r req.txt",
    ]


def test_action_runs_streamproof_and_uploads_before_failing() -> None:
    steps = load_yaml(ACTION)["runs"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    assert uses[0].startswith("actions/setup-python@")
    upload = next(i for i, u in enumerate(uses) if u.startswith("actions/upload-artifact@"))
    assert steps[upload]["if"] == "always()"
    run = next(s for s in steps if s.get("id") == "run")["run"]
    for option in ("--json", "--html", "--junit", "--expect", "--fail-on", "--transport"):
        assert option in run, option
    # the exit status is kept, the artifact uploaded, and only then does the job fail
    assert "exit-code=$code" in run and run.rstrip().endswith("exit 0")
    last = steps[-1]
    assert upload < len(steps) - 1 and "steps.run.outputs.exit-code" in str(last["env"])
    # inputs reach the shell through the environment, never pasted into a script
    for step in steps:
        assert "${{ inputs." not in step.get("run", ""), step.get("name")


def test_action_steps_run_locally(tmp_path: Path) -> None:
    """The action's run, verify and fail steps, with inputs as GitHub would pass them."""
    steps = {s.get("id") or s["name"]: s for s in load_yaml(ACTION)["runs"]["steps"]}
    out = tmp_path / "out"
    github_output, summary = tmp_path / "github-output", tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "SP_ADAPTER": str(ADAPTERS / "naive_lines.py"),
        "SP_EXPECT": "",
        "SP_TRANSPORTS": "whole",
        "SP_FAIL_ON": "must",
        "SP_SEED": "1",
        "SP_JOBS": "1",
        "SP_SHARD": "",
        "SP_OUT": str(out),
        "GITHUB_OUTPUT": str(github_output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    if not shutil.which("streamproof", path=env["PATH"]):
        pytest.skip("no streamproof command beside this interpreter")

    def step(key: str, **extra: str) -> subprocess.CompletedProcess[str]:
        script = steps[key]["run"]
        return subprocess.run(
            ["bash", "-c", script],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**env, **extra},
            timeout=300,
            check=False,
        )

    assert step("run").returncode == 0
    outputs = dict(line.split("=", 1) for line in github_output.read_text().splitlines())
    assert outputs["exit-code"] == "1"  # naive_lines fails must cases
    assert {p.name for p in out.iterdir()} >= {"results.json", "report.html", "junit.xml"}
    assert "## streamproof:" in summary.read_text()
    verified = step("verify")
    assert verified.returncode == 0 and (out / "badge.json").exists(), verified.stderr
    assert json.loads((out / "badge.json").read_text())["color"] == "red"
    failed = step("Fail on failures", SP_CODE=outputs["exit-code"])
    assert failed.returncode == 1 and "::error::" in failed.stdout
    assert step("Fail on failures", SP_CODE="0").returncode == 0
    # one job of a sharded matrix: its share of the run, merged later
    shard_out = tmp_path / "shard"
    assert step("run", SP_SHARD="2/3", SP_OUT=str(shard_out)).returncode == 0
    assert json.loads((shard_out / "results.json").read_text())["run"]["shard"]["index"] == 2
    assert "inputs.shard == ''" in steps["verify"]["if"]  # merged, then verified


# docs/ci.md

CI_DOC = ROOT / "docs" / "ci.md"


def test_the_ci_doc_examples_are_valid_and_use_the_action_as_shipped() -> None:
    """Each YAML example of docs/ci.md: a valid workflow (or its steps), whose
    action step gives only inputs the action has, the required ones included."""
    from ruamel.yaml import YAML

    text = CI_DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 2
    inputs = load_yaml(ACTION)["inputs"]
    required = {name for name, spec in inputs.items() if spec.get("required")}
    workflows = vendored_schema("github-workflows.json")
    used = []
    for block in blocks:
        document = YAML(typ="safe", pure=True).load(block)
        if isinstance(document, dict):  # a whole workflow
            assert schema_problems(workflows, document) == []
            steps = [s for job in document["jobs"].values() for s in job["steps"]]
        else:  # the steps of one
            steps = document
            workflow = {"on": "push", "jobs": {"j": {"runs-on": "x", "steps": steps}}}
            assert schema_problems(workflows, workflow) == []
        for step in steps:
            if "streamproof" in step.get("uses", "") or step.get("uses") == "./":
                used.append(step["uses"])
                assert required <= set(step["with"]) <= set(inputs), step
    assert "./" in used and any(u.endswith("/streamproof@<ref>") for u in used)
    assert "OWNER/" not in text  # no placeholder posing as a repository


# nightly.yml


def test_nightly_workflow_is_valid() -> None:
    workflow = load_yaml(NIGHTLY)
    assert schema_problems(vendored_schema("github-workflows.json"), workflow) == []
    assert set(workflow["on"]) == {"schedule", "workflow_dispatch"}
    assert workflow["on"]["schedule"][0]["cron"]
    steps = workflow["jobs"]["nightly"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "pip install -e '.[adapters]'" in runs
    assert "streamproof setup-node" in runs
    assert "scripts/nightly" in runs
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in steps)


def test_nightly_history_scores_each_library_in_a_matrix_then_renders_the_page() -> None:
    jobs = load_yaml(NIGHTLY)["jobs"]
    libraries = jobs["history"]["strategy"]["matrix"]["library"]
    assert {"openai-python", "node-openai", "litellm", "langchain-openai", "vercel-ai"} <= set(
        libraries
    )
    runs = "\n".join(s.get("run", "") for s in jobs["history"]["steps"])
    assert 'scripts/history "$LIBRARY"' in runs and "streamproof setup-node" in runs
    assert jobs["history-page"]["needs"] == "history"
    page = "\n".join(s.get("run", "") for s in jobs["history-page"]["steps"])
    assert "scripts/history --page-only" in page


def test_the_schemas_do_reject_broken_files() -> None:
    action = load_yaml(ACTION)
    del action["runs"]
    assert schema_problems(vendored_schema("github-actions.json"), action)
    workflow = load_yaml(NIGHTLY)
    workflow["jobs"]["nightly"]["steps"][0]["run"] = "echo both uses and run"
    workflow["on"]["schedule"] = "nightly"
    assert schema_problems(vendored_schema("github-workflows.json"), workflow)


def test_nightly_workflow_step_runs_locally(tmp_path: Path) -> None:
    """The workflow's scripts/nightly step, as written there, on the reference adapter."""
    workflow = load_yaml(NIGHTLY)
    step = next(
        s for s in workflow["jobs"]["nightly"]["steps"] if "scripts/nightly" in s.get("run", "")
    )
    summary = tmp_path / "step-summary.md"
    env = {
        **os.environ,
        "RUNNER_TEMP": str(tmp_path),
        "ADAPTERS": "reference",  # ${{ inputs.adapters }} of a manual run
        "GITHUB_STEP_SUMMARY": str(summary),
        "PYTHON": sys.executable,
    }
    proc = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "nightly"
    assert (out / "baselines" / "reference.json").exists()
    assert (out / "matrix.html").exists()
    assert "| reference | compared | 0 | 0 |" in summary.read_text()


# scripts/nightly


def test_nightly_script_on_a_few_cases(tmp_path: Path) -> None:
    proc = nightly("--case", "sse-spec/*", "--out", tmp_path, "reference")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "diffs" / "reference.json").read_text())
    assert report["regression"] is False and report["counts"]["compared"] > 40
    assert report["counts"]["gone"] == 0  # the committed baseline is cut to the same cases
    assert "| reference | compared | 0 | 0 | 0 |" in (tmp_path / "summary.md").read_text()
    assert proc.stdout.rstrip().splitlines()[-1].startswith("nightly: 1 adapter(s), 0 regression")


VARIANT = '''
import time

{naive}

_naive_parse = parse


def parse(response):
    """naive_lines with one case broken and one hanging."""
    if response.case_id == {hanging!r}:
        while True:
            time.sleep(60)
    outcome = _naive_parse(response)
    if response.case_id == {broken!r}:
        outcome["status"] = "truncated"
    return outcome
'''


def test_nightly_script_fails_on_a_regression_and_reports_timeouts_apart(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    (reports / "baselines").mkdir(parents=True)
    committed = reports / "baselines" / "naive_lines.json"
    command = [sys.executable, "-m", "streamproof", "run", "--adapter"]
    command += [str(ADAPTERS / "naive_lines.py"), "--transport", "whole", "--case", "sse-spec/*"]
    command += ["--seed", "1", "--baseline", str(committed)]
    run = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False
    )
    assert run.returncode == 1, run.stdout + run.stderr
    passing = [
        r["case"] for r in json.loads(committed.read_text())["results"] if r["verdict"] == "pass"
    ]
    broken, hanging = passing[:2]
    variant = tmp_path / "variant" / "naive_lines.py"  # the same name: compared with it
    variant.parent.mkdir()
    naive = (ADAPTERS / "naive_lines.py").read_text(encoding="utf-8")
    variant.write_text(VARIANT.format(naive=naive, broken=broken, hanging=hanging))
    out = tmp_path / "out"
    proc = nightly(
        "--reports",
        reports,
        "--case",
        "sse-spec/*",
        "--transport",
        "whole",
        "--timeout",
        "2",
        "--out",
        out,
        variant,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"regressions (1):\n  {broken} [whole] pass → fail" in proc.stdout
    assert f"timeouts (pass → timeout, reported apart) (1):\n  {hanging} [whole]" in proc.stdout
    summary = (out / "summary.md").read_text()
    assert "| naive_lines | compared | 1 | 1 | 0 |" in summary
    assert "naive_lines: timeouts (apart):" in summary
    assert "FAILED (naive_lines)" in proc.stdout


def test_nightly_script_writes_the_reports(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    out = tmp_path / "out"
    refused = nightly("--write", "--case", "sse-spec/*", "--reports", reports, "reference")
    assert refused.returncode == 2 and "--write takes full runs only" in refused.stderr
    proc = nightly("--write", "--reports", reports, "--out", out, "reference")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = reports / "baselines" / "reference.json"
    assert written.read_bytes() == (out / "baselines" / "reference.json").read_bytes()
    assert (reports / "matrix.html").exists()
    assert "| reference | no baseline |" in (out / "summary.md").read_text()


def test_nightly_script_fails_on_an_adapter_that_cannot_start(tmp_path: Path) -> None:
    missing = ADAPTERS / "no_parse.py"
    proc = nightly("--case", "sse-spec/*", "--out", tmp_path, missing)
    assert proc.returncode == 1
    assert "| no_parse | not scored |" in (tmp_path / "summary.md").read_text()
    left_out = nightly("--case", "sse-spec/*", "--out", tmp_path, "--skip-missing", missing)
    assert left_out.returncode == 0, left_out.stdout + left_out.stderr
    assert "| no_parse | left out |" in (tmp_path / "summary.md").read_text()
