"""Buffer idioms of explicit time stepping, as people write them: a fresh array each step
then rebound, copy then update, swaps and rotations, copy back, rebinding on some branches,
fresh arrays reshaped or transposed and written, buffers written by helpers, ``out=``
scratch, history and parity rows, Runge-Kutta stages, views written through a second name,
a list of states. Each idiom is a template over one step of a diffusion with a small
nonlinearity, written in 1-d or 2-d, with loops or whole-array expressions:

* ``@STEP dst src`` (a line of its own): every element of ``dst`` from ``src``;
* ``@RATE(src)``: a fresh array, the step's right-hand side (whole-array arithmetic);
* ``@LIKE(src)``: an allocation of ``src``'s shape (``np.empty_like`` or ``np.zeros``).

:func:`program` expands one into a Python function ``f(x, k, steps)`` returning a float;
the tests compile it with ``numba.njit`` and ``grad_jit`` and compare the gradient with
central differences of the njit primal.
"""
import textwrap

import numba
import numpy as np

NONLINEAR = 0.05

_STEP = {
    (1, "loop"): """\
{d}[0] = {s}[0] * 0.9
{d}[n - 1] = {s}[n - 1] * 0.9
for i in range(1, n - 1):
    {d}[i] = {s}[i] + k * ({s}[i - 1] - 2.0 * {s}[i] + {s}[i + 1]) - 0.05 * {s}[i] * {s}[i]
""",
    (1, "array"): """\
{d}[0] = {s}[0] * 0.9
{d}[-1] = {s}[-1] * 0.9
{d}[1:-1] = {s}[1:-1] + k * ({s}[:-2] - 2.0 * {s}[1:-1] + {s}[2:]) - 0.05 * {s}[1:-1] * {s}[1:-1]
""",
    (2, "loop"): """\
for i in range(n):
    for j in range(m):
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            {d}[i, j] = {s}[i, j] * 0.9
        else:
            {d}[i, j] = {s}[i, j] + k * ({s}[i - 1, j] + {s}[i + 1, j] + {s}[i, j - 1] + {s}[i, j + 1] - 4.0 * {s}[i, j]) - 0.05 * {s}[i, j] * {s}[i, j]
""",
    (2, "array"): """\
{d}[0, :] = {s}[0, :] * 0.9
{d}[n - 1, :] = {s}[n - 1, :] * 0.9
{d}[1:-1, 0] = {s}[1:-1, 0] * 0.9
{d}[1:-1, m - 1] = {s}[1:-1, m - 1] * 0.9
{d}[1:-1, 1:-1] = {s}[1:-1, 1:-1] + k * ({s}[:-2, 1:-1] + {s}[2:, 1:-1] + {s}[1:-1, :-2] + {s}[1:-1, 2:] - 4.0 * {s}[1:-1, 1:-1]) - 0.05 * {s}[1:-1, 1:-1] * {s}[1:-1, 1:-1]
""",
}
_RATE = "(k * np.sin({s}) - 0.05 * {s} * {s})"
_LIKE = {"loop": "np.zeros({s}.shape)", "array": "np.empty_like({s})"}
_SHAPE = {1: "n = x.shape[0]\n", 2: "n, m = x.shape\n"}


def _expand(body, ndim, style):
    out = []
    for line in body.splitlines():
        stripped = line.lstrip()
        indent = line[:len(line) - len(stripped)]
        if stripped.startswith("@STEP "):
            _, d, s = stripped.split()
            out.extend(indent + ln for ln in
                       _STEP[ndim, style].format(d=d, s=s).splitlines())
            continue
        while "@RATE(" in line or "@LIKE(" in line:
            for key, form in (("@RATE(", _RATE), ("@LIKE(", _LIKE[style])):
                i = line.find(key)
                if i < 0:
                    continue
                j = line.index(")", i)
                line = line[:i] + form.format(s=line[i + len(key):j]) + line[j + 1:]
        out.append(line)
    return "\n".join(out)


def program(name, ndim, style):
    """``(python function, helpers)`` of idiom ``name`` in ``ndim`` dimensions and
    ``style`` ('loop' or 'array')."""
    idiom = IDIOMS[name]
    body = _expand(textwrap.dedent(idiom["body"]), ndim, style)
    src = "def %s(x, k, steps):\n%s" % (name, textwrap.indent(_SHAPE[ndim] + body, "    "))
    namespace = {"np": np}
    for hname, hsrc in idiom.get("helpers", {}).items():
        hbody = _expand(textwrap.dedent(hsrc), ndim, style)
        exec(hbody, namespace)
        namespace[hname] = numba.njit(namespace[hname])
    exec(src, namespace)
    fn = namespace[name]
    fn.__source__ = src
    return fn


def arguments(ndim):
    if ndim == 1:
        x = np.linspace(0.3, 1.2, 7)
    else:
        x = np.linspace(0.3, 1.2, 20).reshape(4, 5)
    return x, 0.15, 3


# ----------------------------------------------------------------------------- idioms
IDIOMS = {}


def idiom(name, body, helpers=None):
    IDIOMS[name] = {"body": body, "helpers": helpers or {}}


_HELPER_STEP = """\
def step_into(dst, src, k):
    n = src.shape[0]
    m = src.shape[-1]
    @STEP dst src
"""
_HELPER_FRESH = """\
def step_fresh(src, k):
    n = src.shape[0]
    m = src.shape[-1]
    dst = @LIKE(src)
    @STEP dst src
    return dst
"""
_HELPER_RATE = """\
def rate(src, k):
    return @RATE(src)
"""

idiom("fresh_empty_rebound", """\
u = x.copy()
for t in range(steps):
    new = np.empty_like(u)
    @STEP new u
    u = new
return np.sum(u * u)
""")
idiom("fresh_zeros_rebound", """\
u = x.copy()
for t in range(steps):
    new = np.zeros(u.shape)
    @STEP new u
    u = new
return np.sum(u * u)
""")
idiom("fresh_copy_rebound", """\
u = x.copy()
for t in range(steps):
    new = u.copy()
    @STEP new u
    u = new
return np.sum(u * u)
""")
idiom("fresh_expression_rebound", """\
u = x * 1.0
for t in range(steps):
    u = u + @RATE(u)
return np.sum(u * u)
""")
idiom("expression_then_written", """\
u = x.copy()
for t in range(steps):
    new = u * 1.0
    @STEP new u
    u = new
return np.sum(u * u)
""")
idiom("fresh_in_while", """\
u = x.copy()
t = 0
while t < steps:
    new = @LIKE(u)
    @STEP new u
    u = new
    t += 1
return np.sum(u * u)
""")
idiom("copy_then_update", """\
u = x.copy()
for t in range(steps):
    new = u.copy()
    new *= 0.5
    new += 0.5 * u + @RATE(u)
    u = new
return np.sum(u * u)
""")
idiom("update_in_place", """\
u = x.copy()
for t in range(steps):
    u += @RATE(u)
return np.sum(u * u)
""")
idiom("tuple_swap", """\
a = x.copy()
b = np.zeros(x.shape)
for t in range(steps):
    @STEP b a
    a, b = b, a
return np.sum(a * a)
""")
idiom("tuple_swap_while", """\
a = x.copy()
b = np.zeros(x.shape)
t = 0
while t < steps:
    @STEP b a
    a, b = b, a
    t += 1
return np.sum(a * a)
""")
idiom("swap_through_temporary", """\
a = x.copy()
b = np.zeros(x.shape)
for t in range(steps):
    @STEP b a
    tmp = a
    a = b
    b = tmp
return np.sum(a * a)
""")
idiom("rotation_of_three", """\
prev = x.copy()
cur = x * 0.9
nxt = np.zeros(x.shape)
for t in range(steps):
    @STEP nxt cur
    nxt += 0.1 * prev
    prev, cur, nxt = cur, nxt, prev
return np.sum(cur * cur) + np.sum(prev)
""")
idiom("leapfrog_fresh", """\
prev = x.copy()
cur = x * 0.9
for t in range(steps):
    nxt = @LIKE(cur)
    @STEP nxt cur
    nxt += 0.1 * prev
    prev = cur
    cur = nxt
return np.sum(cur * cur) + np.sum(prev)
""")
idiom("copy_back", """\
u = x.copy()
new = np.zeros(x.shape)
for t in range(steps):
    @STEP new u
    u[:] = new
return np.sum(u * u)
""")
idiom("copy_back_fresh", """\
u = x.copy()
for t in range(steps):
    new = @LIKE(u)
    @STEP new u
    u[...] = new
return np.sum(u * u)
""")
idiom("copy_back_by_ufunc", """\
u = x.copy()
new = np.zeros(x.shape)
for t in range(steps):
    @STEP new u
    np.multiply(new, 1.0, u)
return np.sum(u * u)
""")
idiom("rebound_on_some_steps", """\
u = x.copy()
for t in range(steps):
    new = @LIKE(u)
    @STEP new u
    if t % 3:
        u = new
    else:
        u = 0.5 * (u + new)
return np.sum(u * u)
""")
idiom("branch_picks_fresh_array", """\
u = x.copy()
for t in range(steps):
    a = @LIKE(u)
    b = @LIKE(u)
    @STEP a u
    @STEP b a
    if t % 2 == 0:
        u = a
    else:
        u = b
return np.sum(u * u)
""")
idiom("conditional_swap", """\
a = x.copy()
b = np.zeros(x.shape)
for t in range(steps):
    @STEP b a
    if t != 1:
        a, b = b, a
return np.sum(a * a) + np.sum(b)
""")
idiom("fresh_raveled_then_reshaped", """\
u = x.copy()
for t in range(steps):
    flat = np.zeros(u.size)
    new = flat.reshape(u.shape)
    @STEP new u
    u = new
return np.sum(u * u)
""")
idiom("fresh_transposed", """\
u = x.copy()
for t in range(steps):
    buf = np.empty_like(u.T)
    new = buf.T
    @STEP new u
    u = new
return np.sum(u * u)
""")
idiom("fresh_reversed_view", """\
u = x.copy()
for t in range(steps):
    buf = np.zeros(u.shape)
    new = buf[::-1]
    @STEP new u
    u = new
return np.sum(u * u)
""")
idiom("fresh_written_then_raveled", """\
u = x.copy()
for t in range(steps):
    new = @LIKE(u)
    @STEP new u
    u = new.ravel().reshape(u.shape)
return np.sum(u * u)
""")
idiom("helper_writes_fresh", """\
u = x.copy()
for t in range(steps):
    new = @LIKE(u)
    step_into(new, u, k)
    u = new
return np.sum(u * u)
""", {"step_into": _HELPER_STEP})
idiom("helper_writes_swapped", """\
a = x.copy()
b = np.zeros(x.shape)
for t in range(steps):
    step_into(b, a, k)
    a, b = b, a
return np.sum(a * a)
""", {"step_into": _HELPER_STEP})
idiom("helper_returns_fresh", """\
u = x.copy()
for t in range(steps):
    u = step_fresh(u, k)
return np.sum(u * u)
""", {"step_fresh": _HELPER_FRESH})
idiom("out_scratch", """\
u = x.copy()
scratch = np.empty_like(u)
for t in range(steps):
    np.multiply(u, u, scratch)
    u = u + k * np.sin(u) - 0.05 * scratch
return np.sum(u * u)
""")
idiom("history_rows", """\
U = np.zeros((steps + 1,) + x.shape)
U[0] = x
for t in range(steps):
    @STEP U[t+1] U[t]
return np.sum(U[steps] * U[steps]) + 0.1 * np.sum(U)
""")
idiom("parity_rows", """\
B = np.zeros((2,) + x.shape)
B[0] = x
for t in range(steps):
    @STEP B[(t+1)%2] B[t%2]
return np.sum(B[steps % 2] * B[steps % 2])
""")
idiom("parity_rows_named", """\
B = np.zeros((2,) + x.shape)
B[0] = x
for t in range(steps):
    src = B[t % 2]
    dst = B[(t + 1) % 2]
    @STEP dst src
return np.sum(B[steps % 2] * B[steps % 2])
""")
idiom("runge_kutta_2", """\
u = x.copy()
for t in range(steps):
    k1 = rate(u, k)
    mid = u + 0.5 * k1
    k2 = rate(mid, k)
    u = u + k2
return np.sum(u * u)
""", {"rate": _HELPER_RATE})
idiom("runge_kutta_4_fresh_stages", """\
u = x.copy()
for t in range(steps):
    k1 = @LIKE(u)
    @STEP k1 u
    k2 = @LIKE(u)
    tmp = 0.5 * (u + k1)
    @STEP k2 tmp
    k3 = @LIKE(u)
    tmp2 = 0.5 * (u + k2)
    @STEP k3 tmp2
    k4 = @LIKE(u)
    @STEP k4 k3
    u = (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
return np.sum(u * u)
""")
idiom("stage_buffers_reused", """\
u = x.copy()
k1 = np.zeros(x.shape)
k2 = np.zeros(x.shape)
for t in range(steps):
    @STEP k1 u
    mid = 0.5 * (u + k1)
    @STEP k2 mid
    u = 0.5 * (k1 + k2)
return np.sum(u * u)
""")
idiom("view_written_through_second_name", """\
u = x.copy()
inner = u[1:-1]
for t in range(steps):
    inner *= 0.9
    inner += 0.1 * np.sin(inner)
return np.sum(u * u)
""")
idiom("state_view_rebound", """\
u = x.copy()
for t in range(steps):
    new = @LIKE(u)
    @STEP new u
    w = new[1:]
    w *= 0.95
    u = new
return np.sum(u * u)
""")
idiom("alias_read_after_loop", """\
init = x.copy()
u = init
for t in range(steps):
    u *= 0.9
    u += k * np.sin(u)
return np.sum(u * u) + np.sum(init)
""")
idiom("list_of_states", """\
states = [x.copy()]
for t in range(steps):
    new = @LIKE(states[-1])
    @STEP new states[-1]
    states.append(new)
s = 0.0
for st in states:
    s += np.sum(st * st)
return s
""")
idiom("two_states_rebound", """\
u = x.copy()
v = x * 0.5
for t in range(steps):
    u_new = u + k * v
    v_new = v - k * np.sin(u)
    u = u_new
    v = v_new
return np.sum(u * u) + np.sum(v)
""")
idiom("symplectic_euler_while", """\
u = x.copy()
v = x.copy()
t = 0
while t < steps:
    u = u + k * v
    v -= k * u
    t += 1
return np.sum(u * u) + np.sum(v)
""")
idiom("symplectic_euler_for", """\
u = x.copy()
v = np.zeros_like(x)
for t in range(steps):
    u = u + k * v
    v = v - k * u
return np.sum(u * u) + np.sum(v)
""")
idiom("fresh_allocated_in_inner_loop", """\
u = x.copy()
for t in range(steps):
    for r in range(2):
        new = @LIKE(u)
        @STEP new u
        u = new
return np.sum(u * u)
""")
idiom("accumulate_into_fresh", """\
u = x.copy()
total = np.zeros(x.shape)
for t in range(steps):
    new = @LIKE(u)
    @STEP new u
    total += new
    u = new
return np.sum(total * total)
""")
