"""numba_adstack: reverse-mode automatic differentiation for Numba code."""
from .errors import (AdStackError, AdStackBudgetError, AdStackOverflowError,
                     AdStackUnderflowError, NonDifferentiableError, AdjointArgumentError)
from . import config

__version__ = "0.1.0"
