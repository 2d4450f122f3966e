"""numba_adstack: reverse-mode automatic differentiation for Numba code."""
from .errors import (AdStackError, AdStackBudgetError, AdStackOverflowError,
                     AdStackUnderflowError, NonDifferentiableError, AdjointArgumentError,
                     AdStackCacheWarning, IntegerArgumentWarning, ThirdDerivativeError,
                     AdjointReadError, CheckpointIgnoredWarning)
from . import config

from ._version import __version__  # noqa: F401,E402
from . import typing as _typing  # noqa: F401,E402  (typing templates)
from . import lowering as _lowering  # noqa: F401,E402  (CPU data models and lowering)
from .intrinsics import adstack, push, pop, top, size, overflowed, clear, reserve  # noqa: F401,E402
from .ad.dispatch.api import grad_jit, GradDispatcher  # noqa: F401,E402
from .ad.dispatch.derived import hessian, jacobian  # noqa: F401,E402
from .ad.calls.implicit import implicit_root, stop_gradient  # noqa: F401,E402
from .ad.capture.checkpoint_loop import checkpoint  # noqa: F401,E402
from .ad.calls.custom import custom_vjp, custom_jvp  # noqa: F401,E402
from .ad.dispatch import jitted as _jitted  # noqa: F401,E402  (gradients called from jitted code)
from .ad import calls as _calls  # noqa: F401,E402  (calls the capture leaves to their own rewrite)
