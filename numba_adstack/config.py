"""Settings, read once from the environment and changeable at run time."""
import os

#: Bytes of adstack storage one compiled CPU function may keep in its frame.
FRAME_BUDGET_BYTES = int(os.environ.get("NUMBA_ADSTACK_FRAME_BUDGET", 256 * 1024))

#: Capacity of stacks whose loop trip count is only known at run time.
DEFAULT_AD_STACK_SIZE = int(os.environ.get("NUMBA_ADSTACK_SIZE", 1024))
