"""autograd (HIPS): autograd.grad of the loss written with autograd.numpy,
vectorised like the PyTorch version (autograd has no in-place updates)."""
from . import Unsupported, module_available

NAME = "autograd"
REQUIRES = "autograd"


def available():
    return module_available("autograd")


def build(workload, args):
    import autograd
    import autograd.numpy as anp

    name = workload.name
    if name == "sin_recurrence":
        x, steps = args

        def loss(x):
            v = x
            for _ in range(steps):
                v = anp.sin(v) * 1.01
            return anp.sum(v)

        g = autograd.grad(loss)
        return lambda: (g(x), None)

    if name == "long_recurrence":
        x, w, steps = args

        def loss(x, w):
            v = x[0]
            for _ in range(steps):
                v = anp.sin(v) * 1.01 + 0.1 * w
            return v

        g = autograd.grad(loss, argnum=(0, 1))

        def grad():
            gx, gw = g(x, w)
            return gx, float(gw), None
        return grad

    if name == "newton_sqrt":
        (a,) = args

        def loss(a):
            x = a
            active = anp.abs(x * x - a) >= 1e-12 * a
            while active.any():
                x = anp.where(active, 0.5 * (x + a / x), x)
                active = anp.abs(x * x - a) >= 1e-12 * a
            return anp.sum(x)

        g = autograd.grad(loss)
        return lambda: (g(a),)

    if name == "mass_spring":
        x0, v0, k, rest, mass, dt, steps = args
        zero = anp.zeros(1)

        def loss(v0, k):
            x, v = x0, v0
            for _ in range(steps):
                s = k * (x[1:] - x[:-1] - rest)
                f = anp.concatenate([s, zero]) - anp.concatenate([zero, s])
                v = v + dt * f / mass
                x = x + dt * v
            return anp.sum(x * x)

        g = autograd.grad(loss, argnum=(0, 1))

        def grad():
            gv, gk = g(v0, k)
            return None, gv, float(gk), None, None, None, None
        return grad

    if name == "mc_option":
        S0, sigma, r, K, T, Z = args
        n_paths, n_steps = Z.shape

        def loss(S0, sigma, r):
            dt = T / n_steps
            drift = (r - 0.5 * sigma * sigma) * dt
            vol = sigma * anp.sqrt(dt)
            s = S0 * anp.ones(n_paths)
            for t in range(n_steps):
                s = s * anp.exp(drift + vol * Z[:, t])
            return anp.exp(-r * T) * anp.mean(anp.maximum(s - K, 0.0))

        g = autograd.grad(loss, argnum=(0, 1, 2))

        def grad():
            return tuple(float(v) for v in g(S0, sigma, r)) + (None, None, None)
        return grad

    if name == "logistic_regression":
        raise Unsupported("not written for this peer: the comparison for the whole-array "
                          "workload is with JAX")
    raise NotImplementedError(name)
