"""CPU lowering of the adstack intrinsics: entry-block storage, per-function frame budget,
overflow and underflow checks, heap storage."""
from . import models  # noqa: F401  (registers the data models)
from . import cpu

cpu.install()
