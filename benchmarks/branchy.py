"""A family of long, branchy functions, written the way a simulation step is written:
nested ``if``/``else``, ``while`` loops with ``break`` and ``continue`` inside ``for``
loops, loop-carried floats. ``make_source(segments)`` grows linearly with ``segments``;
every function takes ``(x, p, n)`` and returns a float with bounded derivatives."""
import math

_SEGMENT = '''\
    for i in range(n):
        a = x[(i + {k}) % m] + {c1} * s
        if a > {t1}:
            b = math.sin(a) * p
            if b > {t2}:
                a = a * 0.9 + b
            elif b < -{t2}:
                a = a - 0.1 * b
            else:
                a = math.tanh(a + b)
        else:
            a = math.cos(a) * {c2}
            if a < {t3}:
                a = a + 0.5 * p
        k = 0
        while a > 0.05:
            a = a * 0.7 + 0.01 * p
            k += 1
            if k > {kmax}:
                break
            if a < 0.2:
                continue
            a = a - 0.02 * math.sin(s)
        s = s + a * {c3}
'''


def make_source(segments, name="step"):
    """Source of a function of ``segments`` segments (about 24 lines each)."""
    lines = ["def %s(x, p, n):" % name, "    m = x.shape[0]", "    s = 0.0"]
    for k in range(segments):
        lines.append(_SEGMENT.format(
            k=k, c1=0.1 + 0.01 * k, t1=0.3 + 0.02 * (k % 5), t2=0.1 + 0.01 * (k % 3),
            t3=0.2 + 0.01 * (k % 4), c2=0.8 + 0.01 * (k % 7), kmax=3 + k % 4,
            c3=0.5 + 0.01 * (k % 9)).rstrip("\n"))
    lines.append("    return s")
    return "\n".join(lines) + "\n"


def make_function(segments, name="step"):
    """The plain Python function of :func:`make_source`."""
    ns = {"math": math}
    exec(compile(make_source(segments, name), "<branchy %d>" % segments, "exec"), ns)
    return ns[name]
