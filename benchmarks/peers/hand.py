"""The gradient written by hand in numba: the reference and the practical limit."""
NAME = "hand"
REQUIRES = None


def available():
    return True, ""


def build(workload, args):
    g = workload.hand_grad_jit
    return lambda: g(*args)
