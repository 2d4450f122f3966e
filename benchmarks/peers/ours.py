"""numba_adstack.grad_jit applied to the unchanged primal, with its default options (its
stacks size themselves: no ad_stack_size)."""
from . import module_available

NAME = "ours"
REQUIRES = None


def available():
    ok, message = module_available("numba_adstack")
    if not ok:
        return ok, message
    import numba_adstack
    if not hasattr(numba_adstack, "grad_jit"):
        return False, "numba_adstack.grad_jit does not exist yet"
    return True, ""


def build(workload, args):
    import numba_adstack
    f = numba_adstack.grad_jit(wrt=workload.wrt)(workload.primal)
    return lambda: f.grad(*args)
