"""Fit a damped spring to noisy positions with a PyTorch optimiser (docs/interop.md).

The simulation is a Numba function returning the whole trajectory (an array);
``numba_adstack.torch.function`` makes it a PyTorch operation whose backward is the
simulation's vector-Jacobian product. The loss is written in PyTorch, and ``torch.optim.Adam``
fits the stiffness and the damping.

Run it with ``python docs/examples/torch_spring.py [plot.png]``; the documentation build
runs ``plot`` to draw the loss curve of docs/interop.md.
"""
import sys

import numpy as np
import torch

import numba_adstack as nad
import numba_adstack.torch

DT = 0.01          # time step (s)
STEPS = 10         # time steps between two observations
TRUE = (4.0, 0.3)  # stiffness k (1/s^2) and damping c (1/s) of the data


@nad.grad_jit
def positions(params, dt, steps, n):
    """Positions of a unit mass on a damped spring (x(0) = 1, v(0) = 0) every ``steps``
    time steps, ``n`` of them (semi-implicit Euler); ``params`` is ``[k, c]``."""
    k = params[0]
    c = params[1]
    out = np.empty(n)
    x = 1.0
    v = 0.0
    for j in range(n):
        for _ in range(steps):
            v += dt * (-k * x - c * v)
            x += dt * v
        out[j] = x
    return out


simulate = numba_adstack.torch.function(positions)


def observations(n=60, noise=0.02, seed=0):
    """Positions of the spring with the TRUE parameters, plus Gaussian noise."""
    clean = positions(np.array(TRUE), DT, STEPS, n)
    return torch.from_numpy(clean + noise * np.random.default_rng(seed).standard_normal(n))


def fit(observed, guess=(2.5, 1.0), iterations=300, lr=0.05):
    """Adam on the mean squared error; returns the parameters and the loss at each step."""
    params = torch.tensor(guess, dtype=torch.float64, requires_grad=True)
    optimiser = torch.optim.Adam([params], lr=lr)
    losses = []
    for _ in range(iterations):
        optimiser.zero_grad()
        loss = torch.mean((simulate(params, DT, STEPS, observed.shape[0]) - observed) ** 2)
        loss.backward()             # through the Numba simulation's vjp
        optimiser.step()
        losses.append(loss.item())
    return params.detach().numpy(), losses


def plot(path, observed=None):
    """Draw the loss curve and the fitted spring into ``path``; returns the fit."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    observed = observations() if observed is None else observed
    params, losses = fit(observed)
    t = DT * STEPS * np.arange(1, observed.shape[0] + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.2), layout="constrained")
    left.semilogy(losses)
    left.set_xlabel("Adam step")
    left.set_ylabel("mean squared error")
    right.plot(t, observed.numpy(), "o", ms=3, color="0.3", label="observed")
    fitted = positions(params, DT, STEPS, observed.shape[0])
    right.plot(t, fitted, "-", label="fitted: k = %.2f, c = %.2f" % tuple(params))
    right.set_xlabel("time (s)")
    right.set_ylabel("position")
    right.legend(loc="upper right", fontsize=8)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return params, losses


def main(argv):
    observed = observations()
    params, losses = fit(observed) if len(argv) < 2 else plot(argv[1], observed)
    print("loss %.5f -> %.5f; fitted k = %.3f, c = %.3f (true %.1f, %.1f)"
          % (losses[0], losses[-1], params[0], params[1], TRUE[0], TRUE[1]))


if __name__ == "__main__":
    main(sys.argv)
