"""pyproject declares compatible ranges for users' own environments; constraints.txt is the exact set `make`
installs. The two must agree, or `make` on a fresh machine fails to resolve."""

import tomllib
from pathlib import Path

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
