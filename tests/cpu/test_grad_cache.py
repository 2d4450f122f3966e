"""``grad_jit(cache=True)``: gradients cached on disk across processes, invalidated when the
function, a helper or a global changes, and robust to bad cache entries."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import uuid
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import AdStackCacheWarning
from numba_adstack.ad.dispatch import cache as disk_cache
from numba_adstack.ad.dispatch import cache_key

import lib_helpers

from conftest import check_fd, subprocess_opt

ROOT = Path(nad.__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parents[1]

HELPERS = '''
import numba
import numpy as np

SCALE = np.array([1.0, 2.0, 3.0])

@numba.njit
def force(v, k):
    return -k * v * v * v
'''

MODEL = '''
import numpy as np
import numba_adstack as nad
from helpers import force, SCALE

@nad.grad_jit(cache=True)
def spring(x, k, n):
    """A while loop, a helper in another file: position after n steps."""
    v = 0.0
    p = x[0]
    i = 0
    while i < n:
        v += 0.01 * force(p, k)
        p += 0.01 * v
        i += 1
    return p * x[1]

@nad.grad_jit(cache=True)
def scaled(x):
    """Reads a global array."""
    s = 0.0
    for i in range(x.shape[0]):
        s += SCALE[i] * np.sin(x[i])
    return s

@nad.grad_jit(cache=True)
def plain(x, w):
    return np.sum(x) * w

ARGS = {"spring": (np.array([0.7, 1.3]), 2.0, 50),
        "scaled": (np.array([0.1, 0.2, 0.3]),),
        "plain": (np.array([1.0, 2.0]), 0.5)}
'''

RUN = '''
import json, sys, time
import numpy as np
from conftest import fd_grad
import model

out = {}
for name in sys.argv[1:]:
    f = getattr(model, name)
    args = model.ARGS[name]
    value = f(*args)                           # the primal, compiled or loaded: not timed
    t0 = time.perf_counter()
    grad = f.grad(*args)
    first = time.perf_counter() - t0
    bw = next(iter(f._backwards.values()))
    hits = sum(bw.njit_fn.stats.cache_hits.values())
    out[name] = {"first_grad_s": first, "from_disk": bw.from_disk, "entry_hits": hits,
                 "value": value, "py_value": f.py_func(*args),
                 "primal_hits": sum(f.stats.cache_hits.values()),
                 "vg_value": f.value_and_grad(*args)[0],
                 "note": f.inspect_adjoint(*args).split("def ")[0],
                 "grad": [None if g is None else np.asarray(g).tolist() for g in grad],
                 "fd": [None if g is None else np.asarray(g).tolist()
                        for g in fd_grad(f.py_func, args)]}
print(json.dumps(out))
'''


def _env(**extra):
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS)])
    env["NUMBA_OPT"] = subprocess_opt()
    env.update(extra)
    return env


def run(src, *names, **env):
    r = subprocess.run([sys.executable, "run.py", *names], cwd=src, env=_env(**env),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for name, got in out.items():
        # The primal and the gradient are of the function as it is now.
        assert got["value"] == pytest.approx(got["py_value"], rel=1e-12), name
        assert got["vg_value"] == pytest.approx(got["py_value"], rel=1e-12), name
        for g, w in zip(got["grad"], got["fd"]):
            if w is None:
                assert g is None, name
            else:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-8, err_msg=name)
    return out


def write_project(src):
    src.mkdir(exist_ok=True)
    (src / "helpers.py").write_text(HELPERS)
    (src / "model.py").write_text(MODEL)
    (src / "run.py").write_text(RUN)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project run in a cold process, then in a second one with the cache written."""
    src = tmp_path_factory.mktemp("cached") / "src"
    write_project(src)
    names = ("spring", "scaled", "plain")
    cold = run(src, *names)
    warm = run(src, *names)
    return src, cold, warm


def test_second_process_loads_gradients_instead_of_compiling(project):
    src, cold, warm = project
    for name in cold:
        assert not cold[name]["from_disk"], name
        assert warm[name]["from_disk"], name
        assert warm[name]["entry_hits"] >= 1, name     # machine code from Numba's cache
        assert cold[name]["primal_hits"] == 0 and warm[name]["primal_hits"] >= 1, name
        assert warm[name]["grad"] == cold[name]["grad"], name
        # inspect_adjoint's lines on checkpointed loops come back with the entry.
        assert warm[name]["note"] == cold[name]["note"], name
    assert "# loop at line" in warm["spring"]["note"], warm["spring"]["note"]
    # The goal: the first gradient call of the second process takes at most 10%
    # of the cold one (measured here at about 1-2%).
    t_cold = cold["spring"]["first_grad_s"]
    t_warm = warm["spring"]["first_grad_s"]
    print("first grad call: cold %.3f s, cached %.3f s (%.1f%%)"
          % (t_cold, t_warm, 100 * t_warm / t_cold))
    assert t_warm <= 0.1 * t_cold, (t_cold, t_warm)
    entries = sorted(p.name for p in (src / "__pycache__" / "numba_adstack").glob("*.json"))
    assert len(entries) == 3 and all(e.startswith("model.") for e in entries), entries


def test_stale_entries_follow_helpers_and_globals(project):
    """Edit a helper and a global array in another file (Numba's own cache of the
    functions reading them does not see it): the gradients that depend on them are
    generated again (and match finite differences), their primals compiled again (run
    checks that they are the Python function's value); the other one still loads."""
    src, cold, _ = project
    helpers = (src / "helpers.py").read_text()
    (src / "helpers.py").write_text(helpers.replace("-k * v * v * v", "-k * v")
                                    .replace("[1.0, 2.0, 3.0]", "[1.0, 2.0, 5.0]"))
    edited = run(src, "spring", "scaled", "plain")
    assert not edited["spring"]["from_disk"]
    assert not edited["scaled"]["from_disk"]
    assert edited["plain"]["from_disk"] and edited["plain"]["primal_hits"] >= 1
    assert edited["spring"]["primal_hits"] == 0 and edited["scaled"]["primal_hits"] == 0
    assert edited["spring"]["grad"] != cold["spring"]["grad"]
    assert edited["spring"]["value"] != cold["spring"]["value"]
    assert edited["scaled"]["grad"][0][2] != cold["scaled"]["grad"][0][2]
    again = run(src, "spring", "scaled")
    assert again["spring"]["from_disk"] and again["scaled"]["from_disk"]
    assert again["spring"]["grad"] == edited["spring"]["grad"]
    # One entry per function and signature: edits replace entries, they do not pile up.
    assert len(list((src / "__pycache__" / "numba_adstack").glob("*.json"))) == 3


def test_numba_cache_dir_is_used(tmp_path):
    src = tmp_path / "src"
    write_project(src)
    cache_dir = tmp_path / "numba-cache"
    first = run(src, "plain", NUMBA_CACHE_DIR=str(cache_dir))
    second = run(src, "plain", NUMBA_CACHE_DIR=str(cache_dir))
    assert not first["plain"]["from_disk"] and second["plain"]["from_disk"]
    assert list(cache_dir.glob("*/numba_adstack/model.plain-*.json"))
    assert not (src / "__pycache__" / "numba_adstack").exists()


# ------------------------------------------------------------------ bad cache entries
INPROC = '''
import numpy as np
import numba
import numba_adstack as nad

@numba.njit
def damp(v, c):
    return v * (1.0 - c)

@nad.grad_jit(cache=True)
def f(x, c, n):
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(n):
            v = np.sin(damp(v, c)) + 0.1 * v
        s += v * v
    return s
'''
ARGS = (np.array([0.3, 0.6, 0.9]), 0.05, 7)


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A module with a cached gradient, imported from a file in tmp_path."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    path = tmp_path / "inproc.py"
    path.write_text(INPROC)
    name = "inproc_%s" % uuid.uuid4().hex
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, mod)
    spec.loader.exec_module(mod)
    return mod


def fresh(mod):
    """A new dispatcher of the same function: its gradient comes from the disk cache."""
    return nad.grad_jit(cache=True)(mod.f.py_func)


def backward(f):
    return next(iter(f._backwards.values()))


def entry_files(tmp_path, pattern):
    return sorted((tmp_path / "__pycache__" / "numba_adstack").glob(pattern))


def quiet_grad(f):
    with warnings.catch_warnings():
        warnings.simplefilter("error", AdStackCacheWarning)
        return check_fd(f, *ARGS)


def test_in_process_reload_uses_the_entry(module):
    quiet_grad(module.f)
    assert not backward(module.f).from_disk
    g = fresh(module)
    quiet_grad(g)
    assert backward(g).from_disk
    assert g.inspect_adjoint(*ARGS) == module.f.inspect_adjoint(*ARGS)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "source", "field"])
def test_unreadable_entry_is_recompiled_with_a_warning(module, tmp_path, damage):
    quiet_grad(module.f)
    (meta,) = entry_files(tmp_path, "*.json")
    text = meta.read_text()
    if damage == "garbage":
        meta.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        meta.write_text(text[:len(text) // 2])
    elif damage == "source":           # valid JSON, altered source: the digest catches it
        meta.write_text(text.replace("_ret_b", "_ret_c"))
    else:
        data = json.loads(text)
        data["written_args"] = "zero"
        meta.write_text(json.dumps(data))
    g = fresh(module)
    with pytest.warns(AdStackCacheWarning, match="unreadable gradient cache entry"):
        check_fd(g, *ARGS)
    assert not backward(g).from_disk
    h = fresh(module)                  # the entry was written again
    quiet_grad(h)
    assert backward(h).from_disk


@pytest.mark.parametrize("damaged", ["nbc", "nbi"])
def test_damaged_machine_code_is_recompiled_with_a_warning(module, tmp_path, damaged):
    """Numba's data files (machine code) and index files of the generated functions."""
    quiet_grad(module.f)
    files = entry_files(tmp_path, "__pycache__/*." + damaged)
    assert files
    for p in files:
        raw = bytearray(p.read_bytes())
        if damaged == "nbc":
            raw[len(raw) // 2] ^= 0xFF     # one flipped byte, which pickle alone would miss
        else:
            del raw[len(raw) // 2:]
        p.write_bytes(bytes(raw))
    g = fresh(module)
    with pytest.warns(AdStackCacheWarning, match="unreadable cache entry"):
        check_fd(g, *ARGS)
    h = fresh(module)
    quiet_grad(h)
    assert sum(backward(h).njit_fn.stats.cache_hits.values()) == 1


def test_edited_generated_module_is_written_again(module, tmp_path):
    quiet_grad(module.f)
    (py,) = entry_files(tmp_path, "*.py")
    py.write_text(py.read_text().replace("_ret_b", "2.0 * _ret_b"))
    g = fresh(module)
    with pytest.warns(AdStackCacheWarning, match="did not match"):
        check_fd(g, *ARGS)


def test_unwritable_cache_directory_leaves_the_gradient_uncached(module, tmp_path):
    # A file where the folder would go: writing fails even for root, as on a read-only
    # file system.
    (tmp_path / "__pycache__").mkdir(exist_ok=True)
    (tmp_path / "__pycache__" / "numba_adstack").write_text("")
    with pytest.warns(AdStackCacheWarning, match="cannot write the gradient cache"):
        check_fd(module.f, *ARGS)
    g = fresh(module)
    check_fd(g, *ARGS)
    assert not backward(g).from_disk


def test_read_only_source_directory_falls_back_like_numba(module, tmp_path, monkeypatch):
    """No writable __pycache__ next to the source: Numba picks its user-wide cache
    directory, and the gradient goes with it."""
    user_cache = tmp_path / "user-cache"
    (user_cache / "sub").mkdir(parents=True)      # writable: only its parents are not
    monkeypatch.setattr(numba.core.caching.UserWideCacheLocator, "get_cache_path",
                        lambda self: str(user_cache / "sub"))
    pycache = tmp_path / "__pycache__"
    pycache.mkdir(exist_ok=True)
    # Numba probes a directory by creating a temporary file in it; root may write into
    # read-only directories, so the probe is made to fail as it would for anyone else.
    real = tempfile.TemporaryFile

    def probe(*args, dir=None, **kw):
        if dir is not None and Path(dir).resolve() in (pycache, tmp_path):
            raise PermissionError(13, "Permission denied", dir)
        return real(*args, dir=dir, **kw)
    monkeypatch.setattr(tempfile, "TemporaryFile", probe)
    for d in (pycache, tmp_path):
        d.chmod(0o555)
    try:
        g = fresh(module)
        quiet_grad(g)
        assert backward(g).njit_fn.stats.cache_path.startswith(str(user_cache))
        assert list(user_cache.glob("sub/numba_adstack/*.json"))
        assert not (pycache / "numba_adstack").exists()
    finally:
        for d in (pycache, tmp_path):
            d.chmod(0o755)


def test_a_global_that_cannot_be_found_again_is_not_cached(module, monkeypatch):
    monkeypatch.setattr(cache_key, "locate", lambda value, deps: None)
    with pytest.warns(AdStackCacheWarning, match="cannot cache the gradient"):
        check_fd(module.f, *ARGS)
    assert not backward(module.f).from_disk


def test_keys_cover_globals_by_value():
    def reads(v):
        return TABLE[0] * v            # noqa: F821 (set below)

    globals()["TABLE"] = np.array([1.0, 2.0])
    first = cache_key.Dependencies(reads).parts
    globals()["TABLE"] = np.array([1.0, 3.0])
    second = cache_key.Dependencies(reads).parts
    globals()["TABLE"] = object()
    with pytest.raises(cache_key.Uncacheable, match="TABLE"):
        cache_key.Dependencies(reads)
    del globals()["TABLE"]
    assert first != second


def test_keys_cover_the_overloads_of_library_stubs():
    """A call to a library's @overload stub is keyed on the function that makes its
    implementation (the gradient follows that implementation), not on the stub's name."""
    def reads(v):
        return lib_helpers.softplus(v)

    parts = cache_key.Dependencies(reads).parts
    functions = {p[2] for p in parts if p[0] == "function"}
    assert "_softplus_impl" in functions, parts


KEYED = '''
import numba
import numba_adstack as nad
from numba_adstack.ad.dispatch import cache

@numba.njit
def helper(v):
    k = [i for i in range(3)]          # a nested code object
    return v * len(k) if v in {1.0, 2.0, 3.0} else v     # a frozenset constant

@nad.grad_jit(cache=True, fastmath={"nsz", "arcp", "contract"})
def f(x):
    return helper(x)

print(cache.lookup(f, (numba.float64,), False).key)
'''


def test_keys_are_the_same_in_every_process(tmp_path):
    """Nothing that varies between processes (addresses, string hashing) enters a key."""
    (tmp_path / "keyed.py").write_text(KEYED)
    keys = set()
    for seed in ("1", "2"):
        r = subprocess.run([sys.executable, "keyed.py"], cwd=tmp_path, capture_output=True,
                           text=True, env=_env(PYTHONHASHSEED=seed), timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        keys.add(r.stdout.split()[-1])
    assert len(keys) == 1, keys


def test_uncached_dispatchers_have_no_entry():
    @nad.grad_jit
    def f(x):
        return x * x
    assert disk_cache.lookup(f, (numba.float64,), False) is None
    assert f.grad(3.0) == (6.0,)


def test_cache_needs_a_source_file_like_numba():
    ns = {}
    exec(compile(textwrap.dedent('''
        def f(x):
            return x * x
    '''), "<no file>", "exec"), ns)
    with pytest.raises(RuntimeError, match="cannot cache"):
        nad.grad_jit(cache=True)(ns["f"])
    with pytest.raises(RuntimeError, match="cannot cache"):
        numba.njit(cache=True)(ns["f"])


# ----------------------------------------------------------------------------- rule helpers
def test_rule_helpers_are_cached_outside_the_package(tmp_path, monkeypatch):
    """The helpers' machine code goes to NUMBA_CACHE_DIR when set, else to Numba's
    user-wide cache directory: never into the installed package, which an uninstall would
    leave behind (and whose leftover directory would shadow a later install)."""
    from numba.core.caching import FunctionCache
    from numba_adstack.ad.rules import vjp_core
    package = Path(vjp_core.__file__).resolve().parent.parent.parent
    helper = vjp_core.sum_to_shape.py_func
    default = Path(FunctionCache(helper)._cache_path).resolve()
    assert package not in default.parents, default
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    assert tmp_path in Path(FunctionCache(helper)._cache_path).resolve().parents
    # A user's function is still cached where Numba caches it.
    (tmp_path / "user_mod.py").write_text("def f(x):\n    return x\n")
    spec = importlib.util.spec_from_file_location("user_mod", tmp_path / "user_mod.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    assert Path(FunctionCache(mod.f)._cache_path) == tmp_path / "__pycache__"


def test_helper_cache_files_left_in_the_package_are_removed(tmp_path, monkeypatch):
    from numba_adstack.ad.rules import vjp_core
    pycache = tmp_path / "__pycache__"
    pycache.mkdir()
    for name in ("vjp_core.gather-274.py311.nbi", "vjp_core.gather-274.py311.1.nbc",
                 vjp_core._DIGEST_FILE):
        (pycache / name).write_text("old")
    (pycache / "vjp_core.cpython-311.pyc").write_text("kept")
    monkeypatch.setattr(vjp_core, "RULES_DIR", str(tmp_path))
    vjp_core._drop_in_tree_cache()
    assert [p.name for p in pycache.iterdir()] == ["vjp_core.cpython-311.pyc"]


NOTEBOOK_RULE = '''
import math
import numba
import numba_adstack as nad

@nad.custom_vjp
@numba.njit
def notebook_softplus(x):
    return math.log1p(math.exp(-abs(x))) + max(x, 0.0)

@notebook_softplus.defvjp
@numba.njit
def notebook_softplus_vjp(x, g):
    return (g / (1.0 + math.exp(-x)),)
'''


def test_a_custom_vjp_of_no_module_keeps_other_gradients_cached(module):
    # A rule defined where no other process finds it (a notebook, exec) is in every
    # backward's namespace; only a backward that calls it is kept out of the cache.
    exec(NOTEBOOK_RULE, {"__name__": "__main__"})
    quiet_grad(module.f)
    g = fresh(module)
    quiet_grad(g)
    assert backward(g).from_disk
