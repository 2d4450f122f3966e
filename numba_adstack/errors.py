"""Exceptions raised by numba_adstack.

All of them are ordinary Python exceptions: compilation errors derive from Numba's
``NumbaError`` so that existing ``except numba.core.errors.NumbaError`` handlers see them,
run-time errors derive from ``RuntimeError``.
"""
import re

from numba.core.errors import NumbaError, NumbaWarning


class AdStackError(Exception):
    """Base class of every numba_adstack error."""


class AdStackBudgetError(AdStackError, NumbaError):
    """Compile time: the adstacks of one compiled function exceed the frame budget."""


class AdStackOverflowError(AdStackError, RuntimeError):
    """Run time: a push went past the capacity of a fixed-size adstack."""


class AdStackUnderflowError(AdStackError, RuntimeError):
    """Run time: a pop or top on an empty adstack."""


class NonDifferentiableError(AdStackError, NumbaError):
    """Compile time: a construct the reverse-mode rewrite cannot differentiate."""


class AdjointReadError(AdStackError, RuntimeError):
    """Run time, in checked mode (``boundscheck=True`` or ``debug=True``): the backward read
    the adjoint array of a value before anything was written into it. A fault of the
    rewrite, never of the user's code: please report it with the function."""


class AdjointArgumentError(AdStackError, TypeError):
    """Call time: the adjoint arguments of a backward call have the wrong count, shape or dtype."""


class ThirdDerivativeError(AdStackError, NotImplementedError):
    """Backward time: a third derivative through ``numba_adstack.torch.function``, whose
    first and second derivatives only are defined."""


class AdStackCacheWarning(NumbaWarning):
    """A gradient cache entry was unreadable or could not be written: the gradient was
    compiled again (or is not cached), and the result is unaffected."""

    def __init__(self, msg, loc=None):
        super().__init__(msg, loc=loc, highlighting=False)


class IntegerArgumentWarning(UserWarning):
    """An integer argument takes part in float arithmetic, so it would have a derivative,
    but integers are not differentiated: its gradient is None. Pass it as a float."""


class CheckpointIgnoredWarning(UserWarning):
    """A loop marked ``numba_adstack.checkpoint`` in a function whose target does not
    checkpoint (a CUDA kernel): its whole history is kept, the gradient is unaffected."""


_CAPACITY = re.compile(r"capacity of (\d+) elements \((\w+)")


def backward_overflow_message(qualname, ad_options, exc):
    """What ``grad`` says when a fixed-size stack of the backward of ``qualname``
    overflowed (``exc``: the error the stack raised): the stack, then each fix once."""
    m = _CAPACITY.search(str(exc))
    stack = "an adstack" if m is None else "an adstack of %s elements (%s)" % m.groups()
    size = ad_options.get("ad_stack_size")
    if size is None:
        chosen, bigger = 'storage="%s"' % ad_options.get("storage"), "pass ad_stack_size=N"
    else:
        chosen = "ad_stack_size=%d" % size
        bigger = "pass a larger ad_stack_size (e.g. ad_stack_size=%d)" % (4 * size)
    return ("the backward pass of %r overflowed %s: a loop ran longer than %s allows. "
            "Fixes: leave ad_stack_size and storage unset, so that stacks size themselves "
            "and never overflow; or %s, at least the longest trip count of the loop."
            % (qualname, stack, chosen, bigger))


def raise_non_differentiable(qualname, what, loc=None):
    """Raise NonDifferentiableError naming the function, the construct and the line."""
    msg = "cannot differentiate %r: %s" % (qualname, what)
    if loc is not None and getattr(loc, "line", None) is not None:
        msg += "\n  File \"%s\", line %d" % (loc.filename, loc.line)
        try:
            text = loc.get_lines()[loc.line - 1].strip()
        except Exception:
            text = ""
        if text:
            msg += ":\n    " + text
    raise NonDifferentiableError(msg, highlighting=False)
