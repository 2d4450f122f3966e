"""The numba primal (no gradient): the denominator of the gradient/primal ratio."""
NAME = "numba"
REQUIRES = None
IS_PRIMAL = True


def available():
    return True, ""


def build(workload, args):
    f = workload.primal_jit
    return lambda: f(*args)
