"""Global arrays frozen once per signature, for the function and its backward alike.

Numba freezes a global array into the machine code of a function when it compiles it:
changing the array later does not change what the function computes. The backward of a
signature is compiled later (at the first ``grad``), and would freeze the array's value
of that moment. So the dispatcher keeps, at each compilation of the function, a copy of
the global arrays it reads (:func:`snapshot`); the backward of that signature reads
those copies where the arrays have changed since (:func:`as_frozen`), and sees what the
function sees.
"""
import types as pytypes

import numpy as np


def _read_names(code):
    """The global names ``code`` and the functions defined in it read."""
    names, todo = set(), [code]
    while todo:
        c = todo.pop()
        names.update(c.co_names)
        todo.extend(k for k in c.co_consts if isinstance(k, pytypes.CodeType))
    return names


def _read_arrays(py_func):
    """The arrays ``py_func`` reads as globals or from its closure."""
    values = [py_func.__globals__.get(n) for n in _read_names(py_func.__code__)]
    for cell in py_func.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:                 # an empty cell
            pass
    return [v for v in values if isinstance(v, np.ndarray)]


def reads_arrays(py_func):
    """Does ``py_func`` read a global (or closure) array?"""
    return bool(_read_arrays(py_func))


def snapshot(py_func):
    """``{id(array): (array, copy)}`` of the arrays ``py_func`` reads, as they are now."""
    return {id(v): (v, v.copy()) for v in _read_arrays(py_func)}


def as_frozen(namespace, frozen):
    """``namespace`` (the globals of a generated backward) with each array of ``frozen``
    that changed since it was frozen replaced by its frozen copy."""
    out = dict(namespace)
    for name, value in namespace.items():
        kept = frozen.get(id(value))
        if kept is not None and kept[0] is value and not _same(value, kept[1]):
            out[name] = kept[1]
    return out


def _same(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
