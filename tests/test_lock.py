"""The locked test environment (issue 44) agrees with setup.py.

``requirements/test.txt`` is the lock ``tests/run.sh`` installs: made by pip-compile (``bash
tests/lock.sh``) from setup.py's ``install_requires`` and its ``test`` extra. pip-compile marks the
packages setup.py asks for with ``# via tb-graph-plugin (setup.py)``; these tests fail when that set
and setup.py's lists differ (a dependency added to or dropped from one and not the other, names
compared normalized as PEP 503 does), when a locked version is outside setup.py's range, when a
pin has no hash, or when torch is not the CPU build (the CUDA one pulls nvidia-* packages). Fast,
no network: setup.py is read as text (its syntax tree), not run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "setup.py"
LOCK = ROOT / "requirements" / "test.txt"
VIA_SETUP = "tb-graph-plugin (setup.py)"


def normalize(name: str) -> str:
    """A project name as PEP 503 compares them: ``Foo_Bar.baz`` -> ``foo-bar-baz``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def setup_requirements(source: str) -> dict[str, Requirement]:
    """setup.py's ``install_requires`` and ``extras_require["test"]``, by normalized name. The lists
    are read from the ``setuptools.setup(...)`` call of the source as literals; setup.py is not run."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "setup":
            keywords = {k.arg: k.value for k in node.keywords}
            specs = ast.literal_eval(keywords["install_requires"]) + ast.literal_eval(keywords["extras_require"])["test"]
            requirements = [Requirement(spec) for spec in specs]
            return {normalize(r.name): r for r in requirements}
    raise AssertionError("setup.py has no setup(...) call")


def locked(text: str) -> dict[str, dict]:
    """The lock's pins by normalized name: ``version``, ``hashes`` (how many), ``via`` (the
    packages pip-compile says asked for it, e.g. ``tb-graph-plugin (setup.py)``)."""
    pins: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if pin:
            current = pins[normalize(pin[1])] = {"version": pin[2], "hashes": 0, "via": []}
        elif current is not None and line.strip().startswith("--hash="):
            current["hashes"] += 1
        elif current is not None and (via := re.match(r"^\s+#\s+(?:via\s+)?(\S.*)$", line)):
            if via[1] != "via":
                current["via"].append(via[1].strip())
        elif not line.startswith(" "):
            current = None
    return pins


def disagreements(setup_source: str, lock_text: str) -> list[str]:
    """Every way setup.py and the lock disagree, as sentences; empty when they agree."""
    wanted = setup_requirements(setup_source)
    pins = locked(lock_text)
    asked = {name for name, pin in pins.items() if VIA_SETUP in pin["via"]}
    problems = [f"{name}: in setup.py, not locked as its dependency" for name in sorted(set(wanted) - asked)]
    problems += [f"{name}: locked as setup.py's dependency, not in setup.py" for name in sorted(asked - set(wanted))]
    for name in sorted(set(wanted) & set(pins)):
        requirement, version = wanted[name], pins[name]["version"]
        if not requirement.specifier.contains(Version(version), prereleases=True):
            problems.append(f"{name}: locked {version}, setup.py asks {requirement.specifier}")
    problems += [f"{name}=={pin['version']}: no hash" for name, pin in sorted(pins.items()) if not pin["hashes"]]
    return problems


def test_the_lock_and_setup_py_agree():
    problems = disagreements(SETUP.read_text(encoding="utf-8"), LOCK.read_text(encoding="utf-8"))
    assert not problems, "refresh the lock (bash tests/lock.sh, see README):\n" + "\n".join(problems)


def test_the_lock_holds_torch_cpu_and_no_cuda_packages():
    pins = locked(LOCK.read_text(encoding="utf-8"))
    assert pins["torch"]["version"] == "2.13.0+cpu"
    assert pins["torch"]["hashes"] == 1  # the one wheel on disk
    cuda = sorted(name for name in pins if name.startswith("nvidia-") or name == "triton")
    assert not cuda


def test_run_sh_installs_the_lock_with_hashes():
    script = (ROOT / "tests" / "run.sh").read_text(encoding="utf-8")
    assert "--require-hashes -r requirements/test.txt" in script
    assert "--no-deps -e ." in script


SETUP_SNIPPET = '''
import setuptools
setuptools.setup(name="x", install_requires=["numpy>=1.21", "Google_RE2>=1.1"],
                 extras_require={"torch": ["torch>=2.6"], "test": ["pytest>=7", "jax[cpu]>=0.4"]})
'''
LOCK_SNIPPET = '''\
google-re2==1.1.20251105 \\
    --hash=sha256:aa
    # via tb-graph-plugin (setup.py)
jax==0.10.2 \\
    --hash=sha256:bb
    # via tb-graph-plugin (setup.py)
numpy==2.4.6 \\
    --hash=sha256:cc
    # via
    #   jax
    #   tb-graph-plugin (setup.py)
pytest==9.2.0 \\
    --hash=sha256:dd
    # via tb-graph-plugin (setup.py)
'''


def test_the_check_agrees_on_an_agreeing_pair():
    assert disagreements(SETUP_SNIPPET, LOCK_SNIPPET) == []


@pytest.mark.parametrize("setup_source, lock_text, expected", [
    (SETUP_SNIPPET.replace('"pytest>=7"', '"pytest>=7", "optax>=0.2"'), LOCK_SNIPPET,
     ["optax: in setup.py, not locked as its dependency"]),
    (SETUP_SNIPPET.replace('"pytest>=7", ', ""), LOCK_SNIPPET,
     ["pytest: locked as setup.py's dependency, not in setup.py"]),
    # locked, but only as another package's dependency: setup.py's new line was not compiled in
    (SETUP_SNIPPET, LOCK_SNIPPET.replace("    #   jax\n    #   tb-graph-plugin (setup.py)", "    #   jax"),
     ["numpy: in setup.py, not locked as its dependency"]),
    (SETUP_SNIPPET.replace("numpy>=1.21", "numpy<2"), LOCK_SNIPPET, ["numpy: locked 2.4.6, setup.py asks <2"]),
    (SETUP_SNIPPET, LOCK_SNIPPET.replace("    --hash=sha256:dd\n", ""), ["pytest==9.2.0: no hash"]),
])
def test_the_check_names_each_disagreement(setup_source, lock_text, expected):
    assert disagreements(setup_source, lock_text) == expected
