"""A library function whose name a caller's wrapper takes (``square`` calling
``same_name.square``): a call of another function, not a recursion."""
import numba


@numba.njit
def square(x):
    return x * x
