"""environment.yml lists exactly the dependencies of pyproject.toml."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_matches_pyproject():
    deps = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    env_lines = (ROOT / "environment.yml").read_text().splitlines()
    pip_deps = {ln.strip()[2:].strip() for ln in env_lines
                if ln.startswith("      - ") and ln.strip() != "- -e ."}
    assert pip_deps == deps, f"only in pyproject: {deps - pip_deps}; only in environment.yml: {pip_deps - deps}"
