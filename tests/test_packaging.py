"""pyproject declares compatible ranges for users' own environments; constraints.txt is the exact set `make`
installs. The two must agree, or `make` on a fresh machine fails to resolve; and an install into an environment
with other versions inside the ranges must work as ours does."""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parents[1]


def test_every_declared_dependency_is_a_range_that_its_pin_satisfies():
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for text in project["dependencies"] + project["optional-dependencies"]["test"]:
        requirement = Requirement(text)
        assert not any(s.operator == "==" for s in requirement.specifier), f"{text}: a range, not a pin"
        pinned = pins.get(canonicalize_name(requirement.name))
        assert pinned is not None, f"{requirement.name} is not in constraints.txt"
        assert requirement.specifier.contains(pinned), f"constraints.txt pins {requirement.name}=={pinned}, outside {text}"


def test_make_installs_with_the_constraints():
    assert "pip install --quiet -c constraints.txt -e '.[test]'" in (ROOT / "Makefile").read_text()


# Older than constraints.txt's pins, yet inside pyproject's ranges: what a user's own JupyterLab may already have.
OTHER_COMPATIBLE = {"pandas": "2.2.3", "plotly": "6.0.1"}


@pytest.mark.slow
def test_pip_install_into_a_users_environment_with_other_compatible_versions(tmp_path):
    """`pip install .` into a fresh environment that already has a different pandas and plotly keeps them, and
    the installed CLI gives the same Result as the development environment (the kernel compiles there on first
    use, as it would for the user)."""
    env = tmp_path / "user-env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(pip + [f"{name}=={version}" for name, version in OTHER_COMPATIBLE.items()], check=True)
    source = tmp_path / "source"  # a copy of the tracked files: the build writes its own folders into the tree
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run(pip + [str(source)], check=True)
    kept = subprocess.run([str(env / "bin" / "python"), "-c", "import pandas, plotly; print(pandas.__version__, "
                           "plotly.__version__)"], capture_output=True, text=True, check=True).stdout.split()
    assert kept == list(OTHER_COMPATIBLE.values())
    command = ["run", "--synthetic", "voltsp", "--window", "sliding:20:10", "--format", "json"]
    user = subprocess.run([str(env / "bin" / "watermark-explorer"), *command], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "WX_KERNEL_CACHE": str(tmp_path / "kernel")})
    assert user.returncode == 0, user.stderr
    ours = subprocess.run([sys.executable, "-m", "explorer", *command], capture_output=True, text=True, cwd=ROOT,
                          check=True)
    assert json.loads(user.stdout) == json.loads(ours.stdout)
