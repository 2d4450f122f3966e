"""The rules' helpers are compiled once per argument type, not once per integer constant
a caller passes (rules/helper_jit.py); a helper that needs a constant's value to type
still gets it."""
import numba

from numba_adstack.ad.rules.helper_jit import helper_jit
from numba_adstack.ad.rules.vjp_split import split_item_vjp


@helper_jit
def scaled(x, k):
    return x * k


@helper_jit
def item(t, k):
    return t[k]             # a heterogeneous tuple: typed only with k's value


@numba.njit
def caller(x):
    return scaled(x, 2) + scaled(x, 3) + scaled(x, 7) + item((1.5, 2), 0)


def test_integer_constants_share_one_compilation():
    assert caller(2.0) == 2.0 * 12 + 1.5
    assert len(scaled.signatures) == 1
    assert scaled.signatures[0] == (numba.float64, numba.int64)


def test_a_helper_that_needs_the_value_gets_it():
    assert item.needs_values
    assert len(item.signatures) == 1 and isinstance(item.signatures[0][1],
                                                    numba.types.IntegerLiteral)


def test_the_rules_helpers_are_made_so():
    from numba_adstack.ad.rules.helper_jit import TypeSharingDispatcher
    from numba_adstack.ad.rules.helpers import RULE_HELPERS
    assert isinstance(split_item_vjp, TypeSharingDispatcher)
    jitted = [h for h in RULE_HELPERS.values() if isinstance(h, numba.core.dispatcher.Dispatcher)
              and h.py_func.__module__.startswith("numba_adstack.")
              and not hasattr(h, "ad_rule_of")]   # not users' rules (custom_vjp's checks)
    assert jitted and all(isinstance(h, TypeSharingDispatcher) for h in jitted)
