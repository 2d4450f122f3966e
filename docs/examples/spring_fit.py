"""Fit the stiffness and damping of a spring to noisy positions (the tutorial's program).

A damped spring is simulated step by step by an ordinary Numba function; ``loss`` compares
the simulation with observed positions; ``grad_jit`` gives its gradient; SciPy's L-BFGS-B
uses value and gradient together to recover the parameters.

Run it with ``python docs/examples/spring_fit.py [plot.png]``; the documentation build
runs ``plot`` to draw the tutorial's figure.
"""
import sys

import numba
import numpy as np
from scipy.optimize import minimize

import numba_adstack as nad

DT = 0.01          # time step (s)
STEPS = 10         # time steps between two observations
TRUE = np.array([4.0, 0.3])     # stiffness k (1/s^2) and damping c (1/s) of the data


@numba.njit
def simulate(k, c, dt, steps, out):
    """Positions of a unit mass on a damped spring (x(0) = 1, v(0) = 0), written into
    ``out`` every ``steps`` time steps (semi-implicit Euler)."""
    x = 1.0
    v = 0.0
    for j in range(out.shape[0]):
        for _ in range(steps):
            v += dt * (-k * x - c * v)
            x += dt * v
        out[j] = x


@nad.grad_jit(cache=True)
def loss(params, observed, dt, steps):
    """Sum of squared differences between simulated and observed positions."""
    predicted = np.empty_like(observed)
    simulate(params[0], params[1], dt, steps, predicted)
    total = 0.0
    for j in range(observed.shape[0]):
        total += (predicted[j] - observed[j]) ** 2
    return total


def observations(n=60, noise=0.02, seed=0):
    """Positions of the spring with the TRUE parameters, plus Gaussian noise."""
    out = np.empty(n)
    simulate(TRUE[0], TRUE[1], DT, STEPS, out)
    return out + noise * np.random.default_rng(seed).standard_normal(n)


def fit(observed, guess):
    """Parameters minimising ``loss``, from ``guess`` (a scipy OptimizeResult)."""
    def fun(params):
        value, grads = loss.value_and_grad(params, observed, DT, STEPS)
        return value, grads[0]          # grads[0]: d loss / d params
    return minimize(fun, guess, jac=True, method="L-BFGS-B",
                    bounds=[(0.1, 20.0), (0.0, 5.0)])


def plot(path, observed=None, guess=(2.5, 1.0)):
    """Draw the observations, the starting guess and the fitted spring into ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    observed = observations() if observed is None else observed
    result = fit(observed, np.array(guess))
    t = DT * STEPS * np.arange(1, observed.shape[0] + 1)
    fig, ax = plt.subplots(figsize=(7, 3.2), layout="constrained")
    ax.plot(t, observed, "o", ms=3, color="0.3", label="observed")
    for params, style, name in ((guess, "--", "starting guess"), (result.x, "-", "fitted")):
        curve = np.empty_like(observed)
        simulate(params[0], params[1], DT, STEPS, curve)
        ax.plot(t, curve, style, label="%s: k = %.2f, c = %.2f" % (name, *params))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("position")
    ax.legend(loc="upper right", fontsize=8)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return result


def main(argv):
    observed = observations()
    guess = np.array([2.5, 1.0])
    value, grads = loss.value_and_grad(guess, observed, DT, STEPS)
    print("loss at the guess %s: %.4f, gradient %s" % (guess, value, grads[0]))
    result = fit(observed, guess) if len(argv) < 2 else plot(argv[1], observed)
    print("fitted k = %.3f, c = %.3f (true %.1f, %.1f) in %d iterations"
          % (result.x[0], result.x[1], TRUE[0], TRUE[1], result.nit))


if __name__ == "__main__":
    main(sys.argv)
