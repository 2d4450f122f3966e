"""Entry point named in setup.cfg (``numba_extensions``): Numba calls ``init`` when it loads
extensions, so the adstack typing and lowering are registered however Numba is imported."""
from . import typing as _typing  # noqa: F401  (typing templates)
from . import lowering as _lowering  # noqa: F401  (CPU data models and lowering)
from .intrinsics import adstack, push, pop, top, size, overflowed, clear, reserve  # noqa: F401


def init():
    import numba_adstack  # noqa: F401  (importing the package registers everything)
