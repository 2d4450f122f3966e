"""Exceptions raised by numba_adstack.

All of them are ordinary Python exceptions: compilation errors derive from Numba's
``NumbaError`` so that existing ``except numba.core.errors.NumbaError`` handlers see them,
run-time errors derive from ``RuntimeError``.
"""
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


class AdjointArgumentError(AdStackError, TypeError):
    """Call time: the adjoint arguments of a backward call have the wrong count, shape or dtype."""


class AdStackCacheWarning(NumbaWarning):
    """A gradient cache entry was unreadable or could not be written: the gradient was
    compiled again (or is not cached), and the result is unaffected."""

    def __init__(self, msg, loc=None):
        super().__init__(msg, loc=loc, highlighting=False)
