"""The polygamma functions the rules of ``math.lgamma`` and ``math.gamma`` need.

``lgamma'(x) = digamma(x)``, ``gamma'(x) = gamma(x) digamma(x)``, and the second derivative
(forward over reverse, ``hvp``) is ``trigamma``. Neither NumPy nor Numba has them: each is
the asymptotic series at ``x >= 10``, the recurrence down from there, and the reflection
formula for ``x < 0``. Accurate to about 1e-15 relative (1e-13 near the poles, where the
values are large). At a pole (0, -1, -2...) both give NaN, as the gradient of ``lgamma``
is not defined there.
"""
import math

from .helper_jit import helper_jit

# The recurrence raises x to at least this before the asymptotic series: the first term
# left out, B_16 / (16 x^16) for digamma, is below 1e-17 there.
_ASYMPTOTIC_FROM = 10.0


@helper_jit(error_model="numpy")
def _cot_pi(x):
    """cot(pi x), reduced to [-1/2, 1/2] first: pi * x loses the fraction for large x."""
    t = x - math.floor(x + 0.5)
    return math.cos(math.pi * t) / math.sin(math.pi * t)


@helper_jit(error_model="numpy")
def _sin_pi(x):
    t = x - math.floor(x + 0.5)
    return math.sin(math.pi * t)


@helper_jit(error_model="numpy")
def _digamma_positive(x):
    acc = 0.0
    while x < _ASYMPTOTIC_FROM:
        acc -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (
        1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))))
    return acc + math.log(x) - 0.5 / x - series


@helper_jit(error_model="numpy")
def digamma(x):
    """The logarithmic derivative of the gamma function, ``d/dx lgamma(x)``."""
    if math.isnan(x) or (x <= 0.0 and x == math.floor(x)):
        return math.nan
    if x < 0.0:                      # psi(1 - x) - psi(x) = pi cot(pi x)
        return _digamma_positive(1.0 - x) - math.pi * _cot_pi(x)
    return _digamma_positive(x)


@helper_jit(error_model="numpy")
def _trigamma_positive(x):
    acc = 0.0
    while x < _ASYMPTOTIC_FROM:
        acc += 1.0 / (x * x)
        x += 1.0
    z = 1.0 / (x * x)
    series = 1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (
        5.0 / 66 - z * (691.0 / 2730 - z * (7.0 / 6))))))
    return acc + 1.0 / x + 0.5 * z + series * z / x


@helper_jit(error_model="numpy")
def trigamma(x):
    """The derivative of :func:`digamma`."""
    if math.isnan(x) or (x <= 0.0 and x == math.floor(x)):
        return math.nan
    if x < 0.0:                      # psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x)
        s = _sin_pi(x)
        return math.pi * math.pi / (s * s) - _trigamma_positive(1.0 - x)
    return _trigamma_positive(x)
