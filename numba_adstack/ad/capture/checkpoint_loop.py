"""A loop marked ``numba_adstack.checkpoint``: ``for t in checkpoint(range(n)):``.

The marker wraps what the loop iterates, as ``numba.prange`` replaces ``range``: it is the
identity in Python and in jitted code (the primal runs the loop as written), and the
capture takes it off before the loop forms are read (:func:`strip_markers`, called by
:class:`.loopforms.RewriteLoopForms`), noting the loop on the function's IR by the source
line of its iterator (``numba_adstack_checkpoint_marks``).
The plan then checkpoints that loop by the binomial schedule whatever the memory budget
says (:func:`..plan.checkpoint.choose_checkpointed`), as ``checkpoint="revolve"`` does for
the whole function; ``checkpoint(range(n), snapshots=c)`` gives that loop ``c`` snapshots
and, without a ``memory_budget``, segments of one iteration. ``checkpoint="off"`` on the
function turns the marker off. A marked loop that cannot be checkpointed (inside another
loop, or a state that cannot be restored) is refused with a ``NonDifferentiableError``
naming it and its line.
"""
import inspect

import numba
from numba.core import ir, types
from numba.core.extending import overload

from ...errors import raise_non_differentiable
from .ir_emitter import ir_global

# id -> helper marked checkpoint (its gradient is made by calls/checkpoint_call.py)
_MARKED = {}


def checkpoint(fn, snapshots=None):
    """Mark a helper whose history the gradient recomputes instead of storing, or a loop
    the gradient checkpoints.

    On a loop, ``for t in checkpoint(range(n)):`` (or any iterable a ``for`` loop takes,
    with ``snapshots=c`` optionally): the iterable itself, in Python and in jitted code;
    in ``grad_jit`` code the loop is checkpointed by the binomial schedule whatever the
    memory budget (:mod:`.checkpoint_loop`).

    On a helper, ``fn``: an ``@numba.njit`` function (or a Python function, compiled with
    njit). Returns
    a Numba function computing what ``fn`` computes, callable from Python and from jitted
    code. Inside a ``grad_jit`` function, a call of the returned function keeps only its
    arguments for the backward; the backward runs ``fn``'s own gradient from them. Use it
    on a step of a time loop whose internal history (inner loops) is large: the memory kept
    is that of the step's inputs per iteration. ``fn`` takes floats, float arrays (which it
    does not write into) and integers, and returns a float or a float array.
    """
    if not callable(fn) and hasattr(fn, "__iter__"):
        return fn               # a loop's iterable: the marker is read by the capture
    if snapshots is not None:
        raise TypeError("checkpoint: snapshots= is for a loop's iterable, not a helper")
    if hasattr(fn, "py_func") and hasattr(fn, "targetoptions"):
        py_func, options = fn.py_func, dict(fn.targetoptions)
    elif inspect.isfunction(fn):
        py_func, options = fn, {}
    else:
        raise TypeError("checkpoint: expected a Numba or Python function, got %r" % (fn,))
    params = inspect.signature(py_func).parameters.values()
    if any(p.kind != p.POSITIONAL_OR_KEYWORD for p in params):
        raise ValueError("checkpoint: the helper %s must take plain parameters (no *args, "
                         "**kwargs or keyword-only ones)" % py_func.__name__)
    options.pop("nopython", None)
    marked = numba.njit(**options)(py_func)
    _MARKED[id(marked)] = marked
    return marked


def is_marked_helper(obj):
    """Is ``obj`` a helper made by :func:`checkpoint`?"""
    return id(obj) in _MARKED and _MARKED[id(obj)] is obj


@overload(checkpoint)
def _checkpoint_marker_impl(fn, snapshots=None):
    """In jitted code, ``checkpoint(iterable)`` is the iterable itself."""
    if isinstance(fn, types.IterableType):
        def impl(fn, snapshots=None):
            return fn
        return impl
    return None


def _snapshots(fir, qualname, call):
    kws = dict(call.kws)
    if len(call.args) + len(kws) > 2 or set(kws) - {"snapshots"} or \
            (len(call.args) == 2 and kws):
        raise_non_differentiable(qualname, "numba_adstack.checkpoint on a loop takes the "
                                 "iterable and snapshots=", call.loc)
    v = kws.get("snapshots", call.args[1] if len(call.args) == 2 else None)
    if v is None:
        return None
    try:
        d = fir.get_definition(v)
    except KeyError:
        d = None
    value = getattr(d, "value", None)
    if not isinstance(d, (ir.Const, ir.Global, ir.FreeVar)) or value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise_non_differentiable(qualname, "snapshots=%r of numba_adstack.checkpoint on "
                                 "a loop: a count of 1 or more is needed" % (value,),
                                 call.loc)
    return value


def strip_markers(fir, qualname):
    """Take ``checkpoint(...)`` off every ``for`` loop's iterable in the untyped IR ``fir``,
    noting the loops; True when there was one."""
    found = False
    for blk in fir.blocks.values():
        for stmt in blk.body:
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op == "getiter"):
                continue
            try:
                d = fir.get_definition(stmt.value.value)
            except KeyError:
                continue
            if not (isinstance(d, ir.Expr) and d.op == "call" and d.args
                    and ir_global(fir, d.func) is checkpoint):
                continue
            snapshots = _snapshots(fir, qualname, d)
            marker = stmt.value.value
            stmt.value.value = d.args[0]
            marks = getattr(fir, "numba_adstack_checkpoint_marks", None)
            if marks is None:
                marks = fir.numba_adstack_checkpoint_marks = {}
            marks[_key(stmt.value.loc)] = snapshots
            found = True
            _drop_if_unused(fir, marker)
    return found


def _drop_if_unused(fir, var):
    """Remove the marker's call once nothing reads its value."""
    where = None
    for blk in fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, ir.Assign) and stmt.target.name == var.name:
                where = (blk, stmt)
            elif any(v.name == var.name for v in stmt.list_vars()):
                return
    if where is not None:
        where[0].body.remove(where[1])


def _key(loc):
    return (getattr(loc, "filename", None), getattr(loc, "line", None))


def mark_of(facts, lp):
    """``(True, snapshots)`` when ``lp`` is a ``for`` loop marked ``checkpoint``, else
    None."""
    rl = lp.range
    if rl is None or rl.block is None:
        return None
    for stmt in facts.fir.blocks[rl.block].body:
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                stmt.value.op == "iternext":
            v = stmt.value.value
            for _ in range(100):
                e = facts.def_expr(v.name)
                if not isinstance(e, ir.Var):
                    break
                v = e
            marks = getattr(facts.fir, "numba_adstack_checkpoint_marks", {})
            if isinstance(e, ir.Expr) and e.op == "getiter" and _key(e.loc) in marks:
                return True, marks[_key(e.loc)]
    return None
