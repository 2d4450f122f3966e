"""``wrt=``, the arguments to differentiate, as argument indices: one reading for
``grad_jit`` (checked when it decorates), the backward, pullbacks and second-order calls.
"""
import numbers


def wrt_indices(py_func, wrt):
    """Argument indices from ``wrt`` (names, or indices counted as Python counts them:
    -1 is the last argument), or None for every argument. Anything else is a
    ``ValueError`` naming the entry and the function's parameters."""
    if wrt is None:
        return None
    if isinstance(wrt, (str, numbers.Integral)):
        wrt = (wrt,)
    names = py_func.__code__.co_varnames[:py_func.__code__.co_argcount]
    try:
        entries = list(wrt)
    except TypeError:
        entries = [wrt]
    out = set()
    for w in entries:
        if isinstance(w, str) and w in names:
            out.add(names.index(w))
        elif isinstance(w, numbers.Integral) and not isinstance(w, bool) \
                and -len(names) <= w < len(names):
            out.add(int(w) % len(names))
        else:
            raise ValueError(
                "wrt=%r: %r is not an argument of %s(%s); give argument names or indices "
                "from %d to %d" % (wrt, w, py_func.__name__, ", ".join(names), -len(names),
                                   len(names) - 1))
    return frozenset(out)
