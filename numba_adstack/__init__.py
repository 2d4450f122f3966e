"""numba_adstack: reverse-mode automatic differentiation for Numba code."""
from .errors import (AdStackError, AdStackBudgetError, AdStackOverflowError,
                     AdStackUnderflowError, NonDifferentiableError, AdjointArgumentError,
                     AdStackCacheWarning, IntegerArgumentWarning, ThirdDerivativeError,
                     AdjointReadError, CheckpointIgnoredWarning)
from . import config

__version__ = "0.1.0"
from ._extension import adstack, push, pop, top, size, overflowed, clear, reserve  # noqa: F401,E402
from .ad.api import grad_jit, GradDispatcher  # noqa: F401,E402
from .ad.tangent.derived import hessian, jacobian  # noqa: F401,E402
from .ad.implicit import implicit_root, stop_gradient  # noqa: F401,E402
from .ad.checkpoint_call import checkpoint  # noqa: F401,E402
from .ad.custom import custom_vjp, custom_jvp  # noqa: F401,E402
from .ad import jitted as _jitted  # noqa: F401,E402  (gradients called from jitted code)
