"""The memory a process really has (config.memory_limits: available memory, RLIMIT_AS and
RLIMIT_DATA, cgroup v1 and v2 limits) sets the checkpointing budget, and a history that
does not fit after all is made again checkpointed (Backward.recover), with the gradient of
the whole history."""
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import config
from numba_adstack.ad.dispatch.backward import HistoryDoesNotFit

GiB, MiB, KiB = 1 << 30, 1 << 20, 1 << 10


def heat(u0, k, n):
    u = u0.copy()
    for t in range(n):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + k * lap
    return np.sum(u * u)


def fake_proc(tmp_path, available, vmsize=0, vmdata=0, cgroup_lines=""):
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text("MemTotal: 99999999 kB\nMemAvailable: %d kB\n"
                                  % (available // KiB))
    (proc / "self" / "status").write_text("Name: python\nVmSize: %d kB\nVmData: %d kB\n"
                                          % (vmsize // KiB, vmdata // KiB))
    (proc / "self" / "cgroup").write_text(cgroup_lines)
    return str(proc)


def cgroup_files(folder, **files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("_", ".", 1)).write_text(text)


def limits_of(as_limit=resource.RLIM_INFINITY, data_limit=resource.RLIM_INFINITY):
    table = {resource.RLIMIT_AS: as_limit, resource.RLIMIT_DATA: data_limit}
    return lambda which: (table.get(which, resource.RLIM_INFINITY), resource.RLIM_INFINITY)


def test_the_budget_is_the_least_of_the_limits(tmp_path):
    cg = tmp_path / "cg"
    # cgroup v2: the job's limit, less its usage less its inactive page cache; the
    # parent's limit is lower still
    cgroup_files(cg / "slurm" / "job", memory_max=str(3 * GiB), memory_current=str(GiB),
                 memory_stat="anon 1\ninactive_file %d\n" % (GiB // 2))
    cgroup_files(cg / "slurm", memory_max=str(2 * GiB), memory_current=str(GiB))
    cgroup_files(cg, memory_max="max", memory_current=str(5 * GiB))
    proc = fake_proc(tmp_path, 8 * GiB, vmsize=GiB, vmdata=GiB // 2,
                     cgroup_lines="0::/slurm/job\n")
    with config.memory_sources(proc=proc, cgroup=str(cg),
                               getrlimit=limits_of(as_limit=4 * GiB)):
        got = config.memory_limits()
        assert got["MemAvailable"] == 8 * GiB
        assert got["RLIMIT_AS"] == 3 * GiB and "RLIMIT_DATA" not in got
        assert got["cgroup " + os.path.join(str(cg), "slurm", "memory.max")] == GiB
        assert config.available_memory() == GiB
        assert config.default_memory_budget() == GiB // 2
    # cgroup v1 (memory.limit_in_bytes, "unlimited" as a huge number) and RLIMIT_DATA
    cgroup_files(cg / "memory" / "batch", memory_limit_in_bytes=str(6 * GiB),
                 memory_usage_in_bytes=str(GiB),
                 memory_stat="cache 5\ntotal_inactive_file %d\n" % (GiB // 4))
    cgroup_files(cg / "memory", memory_limit_in_bytes="9223372036854771712",
                 memory_usage_in_bytes=str(GiB))
    proc = fake_proc(tmp_path / "v1", 16 * GiB, vmdata=GiB,
                     cgroup_lines="5:cpu:/\n4:memory:/batch\n0::/\n")
    with config.memory_sources(proc=proc, cgroup=str(cg),
                               getrlimit=limits_of(data_limit=9 * GiB)):
        got = config.memory_limits()
        assert got["RLIMIT_DATA"] == 8 * GiB
        assert got["cgroup " + os.path.join(str(cg), "memory", "batch", "memory.limit_in_bytes")] == \
            6 * GiB - 3 * GiB // 4
        assert config.available_memory() == 6 * GiB - 3 * GiB // 4
        # past the cap, the cap: measured in docs/grad_jit.md
        assert config.default_memory_budget() == min(config.MEMORY_BUDGET_CAP,
                                                     (6 * GiB - 3 * GiB // 4) // 2)
    assert config.available_memory() > 0            # back to the real files


U0 = np.sin(np.linspace(0.0, 3.0, 202)) ** 2        # 200 interior cells: 1.6 kB a step


def exact(u0, k, n):
    """The gradient of ``heat``, a linear recurrence u' = A u: (2 (A^n)^T u_n, 2 u_n . w_n)
    with w' = A w + (dA/dk) u, w_0 = 0."""
    m = u0.shape[0]
    lap = np.zeros((m, m))
    for i in range(1, m - 1):
        lap[i, i - 1:i + 2] = [1.0, -2.0, 1.0]
    a = np.eye(m) + k * lap
    u, w = u0.copy(), np.zeros(m)
    for _ in range(n):
        u, w = a @ u, a @ w + lap @ u
    g = 2.0 * u
    for _ in range(n):
        g = a.T @ g
    return g, 2.0 * u @ w


def close(got, want):
    return np.allclose(got[0], want[0], rtol=1e-10, atol=1e-13) and \
        abs(got[1] - want[1]) <= 1e-10 * abs(want[1])
_shared = {}


def in_a_container(tmp_path):
    """``heat`` with the default options, compiled in a container of 256 kB with 64 kB
    in use (a cgroup v2 limit, as the budget's source): a budget of 96 kB."""
    if "f" not in _shared:
        cg = tmp_path / "cg"
        cgroup_files(cg, memory_max=str(256 * KiB), memory_current=str(64 * KiB))
        proc = fake_proc(tmp_path, 8 * GiB, cgroup_lines="0::/\n")
        f = nad.grad_jit(heat)
        with config.memory_sources(proc=proc, cgroup=str(cg)):
            f.grad(U0, 0.1, 2)
        _shared["f"] = f
        _shared["sources"] = dict(proc=proc, cgroup=str(cg))
    return _shared["f"]


def same(got, want):
    return np.array_equal(got[0], want[0]) and got[1] == want[1]


def test_a_cgroup_limit_checkpoints(tmp_path):
    f = in_a_container(tmp_path)
    bw = f._backward([U0, 0.1, 2])
    assert bw.memory_budget == 96 * KiB
    assert "memory budget of %d bytes" % (96 * KiB) in f.inspect_adjoint(U0, 0.1, 2)
    # 300 steps keep 480 kB: past the budget, checkpointed; 30 steps (48 kB) are not.
    assert close(f.grad(U0, 0.1, 300), exact(U0, 0.1, 300))
    assert set(bw._checkpointed) == {"revolve"}
    assert close(f.grad(U0, 0.1, 30), exact(U0, 0.1, 30))


def failing_once(bw):
    """Make the next call of ``bw``'s compiled backward fail as an allocation would."""
    real = bw.njit_fn

    def fail(*args):
        bw.njit_fn = real
        raise MemoryError("out of memory in function 'heat_backward': cannot allocate "
                          "adstack storage (float64, heap)")
    bw.njit_fn = fail


def _fail(*args):
    raise MemoryError("Allocation failed (probably too large).")


def test_a_failed_allocation_is_made_again_checkpointed(tmp_path, monkeypatch):
    f = in_a_container(tmp_path)
    args = (U0, 0.1, 30)                # 48 kB of history, within the budget of 96 kB
    value, want = f.value_and_grad(*args)               # the whole history
    assert close(want, exact(*args))
    bw = f._backward(list(args))
    # The next call runs out of memory; 192 kB is then available: made again
    # checkpointed under the least of half of it and half the budget that failed (a
    # power of two: 32 kB, segments of 10 steps).
    proc = fake_proc(tmp_path, 192 * KiB)
    failing_once(bw)
    with config.memory_sources(proc=proc):
        got = f.call_backward(*args, 1.0, True)       # (Backward.run)
    assert list(bw._recovered) == [32 * KiB]
    assert "checkpointed" in bw._recovered[32 * KiB].checkpoint_note
    assert same(got[1], want) and got[0] == value
    # From the signature table (api.grad), the same variant.
    monkeypatch.setattr(f, "_table", _fail)
    with config.memory_sources(proc=proc):
        assert same(f.grad(*args), want)
        assert f.value_and_grad(*args)[0] == got[0]
    assert list(bw._recovered) == [32 * KiB]


def test_a_state_that_does_not_fit_is_named(tmp_path):
    f = in_a_container(tmp_path)
    big = np.linspace(0.0, 1.0, 20002)                 # a state of 160 kB
    with config.memory_sources(**_shared["sources"]), \
            pytest.raises(HistoryDoesNotFit) as info:
        f.grad(big, 0.1, 2)
    msg = str(info.value)
    assert "'heat'" in msg and "(u)" in msg and "line" in msg and "more memory" in msg
    assert close(f.grad(U0, 0.1, 2), exact(U0, 0.1, 2))     # the next call that fits


LIMITED = r'''
import math, resource, sys
import numpy as np
import numba
import numba_adstack as nad
from numba_adstack import config

@nad.grad_jit
def drift(x, n):
    v = x
    i = 0
    while i < n:
        v = v + 1e-8 * math.sin(v)
        i += 1
    return v

@numba.njit
def drift_derivative(x, n):          # forward mode, by hand
    v, d = x, 1.0
    for i in range(n):
        d = d * (1.0 + 1e-8 * math.cos(v))
        v = v + 1e-8 * math.sin(v)
    return d

ROOM, HISTORY = int(sys.argv[1]), int(sys.argv[2])
count = HISTORY // 8
exact = drift_derivative(0.3, count)
before = nad.grad_jit(wrt=("x",))(drift.py_func)     # another dispatcher
before.grad(0.3, 2)                # compiled before the limit: keeps the whole history
used = [int(l.split()[1]) * 1024 for l in open("/proc/self/status")
        if l.startswith("VmSize")][0]
resource.setrlimit(resource.RLIMIT_AS, (used + ROOM, resource.RLIM_INFINITY))
assert config.default_memory_budget() <= ROOM // 2, config.memory_limits()
# Compiled under the limit: the budget sees it, and the loop is checkpointed.
got = drift.grad(0.3, count)[0]
assert abs(got - exact) < 1e-6 * abs(exact), (got, exact)
bw = drift._backward([0.3, count])
assert bw.memory_budget <= ROOM // 2
# (checkpointed by the guard, or, if the stack's doubling ran out first, by the retry)
assert bw._checkpointed or bw._recovered
# Compiled without the limit, the backward keeps the whole history, which does not fit:
# made again checkpointed, the same gradient.
got = before.grad(0.3, count)[0]
assert abs(got - exact) < 1e-6 * abs(exact), (got, exact)
assert before._backward([0.3, count])._recovered
print("OK")
'''


def test_under_an_address_space_limit(tmp_path):
    """A real RLIMIT_AS (``ulimit -v``): a while loop's history of 480 MiB with 320 MiB of
    room, with the budget seeing the limit, and with a backward compiled before it."""
    script = tmp_path / "limited.py"
    script.write_text(LIMITED)
    root = os.path.dirname(os.path.dirname(os.path.abspath(nad.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH",
                                                                            "")]))
    p = subprocess.run([sys.executable, str(script), str(320 * MiB), str(480 * MiB)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0 and "OK" in p.stdout, p.stdout + p.stderr
