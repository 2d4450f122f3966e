"""The README's quick start: exactly two commands, the second one is what .ci/run runs, and
(with NUMBA_ADSTACK_TEST_INSTALL=1) the first one works in a fresh virtual environment."""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import OPT_SET_BY_SUITE

ROOT = Path(__file__).resolve().parents[2]


def quick_start_commands():
    """The commands of the first code block under the README's "Quick start" heading."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^#+\s*Quick start\s*$(.*?)^```[a-z]*\n(.*?)^```", text,
                  re.MULTILINE | re.DOTALL | re.IGNORECASE)
    assert m, "README.md has no code block under a 'Quick start' heading"
    return [line.strip() for line in m.group(2).splitlines() if line.strip()]


def ci_commands():
    """The command lines of .ci/run, comments and blank lines left out."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def test_quick_start_is_two_commands():
    install_demo, install_test = quick_start_commands()
    assert "pip install" in install_demo and "numba_adstack.demo" in install_demo
    assert "pip install" in install_test and "pytest" in install_test
    assert '".[test]"' in install_test


def test_ci_runs_the_readme_test_command():
    ci = ci_commands()
    assert ci[0].startswith("#!") or ci[0] == "set -euo pipefail"
    assert "set -euo pipefail" in ci
    # The last thing .ci/run does is the README's test command, verbatim.
    assert ci[-1] == quick_start_commands()[1]
    assert os.access(ROOT / ".ci" / "run", os.X_OK), ".ci/run must be executable"


def _copy_tree(dst):
    """The files of the working tree that git would carry (tracked and untracked, not
    ignored); without git, everything but build outputs and virtual environments."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                             check=True, capture_output=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
                 and not any(part.startswith((".venv", ".git", "build")) or
                             part.endswith(".egg-info") or part == "__pycache__"
                             for part in p.relative_to(ROOT).parts)]
    for f in files:
        src = ROOT / f
        if src.is_file():
            (dst / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / f)


@pytest.mark.skipif(os.environ.get("NUMBA_ADSTACK_TEST_INSTALL") != "1",
                    reason="set NUMBA_ADSTACK_TEST_INSTALL=1 to install into a fresh virtual "
                           "environment (needs the package index, about a minute)")
def test_quick_start_in_fresh_venv(tmp_path):
    """`python3 -m venv`, then the README's first command verbatim in a clean copy of the
    tree with the venv's python3 first on PATH, then the demo once more from outside the
    tree (so the installed package is the one imported)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    assert (bindir / "python3").exists()
    tree = tmp_path / "src"
    tree.mkdir()
    _copy_tree(tree)
    env = dict(os.environ)
    env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(venv)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONHOME", None)
    if OPT_SET_BY_SUITE:                # the demo as a user runs it: Numba's default level
        env.pop("NUMBA_OPT", None)
        env.pop("NUMBA_ADSTACK_SUITE_OPT", None)
    t0 = time.perf_counter()
    r = subprocess.run(["bash", "-c", quick_start_commands()[0]], cwd=tree, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert "OK: reverse-mode gradient matches" in r.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = subprocess.run([str(bindir / "python3"), "-m", "numba_adstack.demo"], cwd=elsewhere,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    r = subprocess.run([str(bindir / "python3"), "-c",
                        "import numba_adstack, sys; print(numba_adstack.__file__)"],
                       cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert str(venv) in r.stdout, "the demo did not run the installed package: " + r.stdout
    print("fresh-venv quick start: %.1f s" % (time.perf_counter() - t0))
