"""PyTorch eager on the CPU: the loss written with tensor operations (vectorised
over elements, paths or particles where the workload allows, a Python loop over
time steps), then loss.backward()."""
from . import Unsupported, module_available

NAME = "torch"
REQUIRES = "torch==2.13.0"


def available():
    return module_available("torch")


def build(workload, args):
    import torch

    def leaf(value):
        return torch.tensor(value, dtype=torch.float64, requires_grad=True)

    def backward(loss, *leaves):
        grads = torch.autograd.grad(loss, leaves)
        return [g.numpy() if g.dim() else float(g) for g in grads]

    name = workload.name
    if name == "sin_recurrence":
        x_np, steps = args

        def grad():
            x = leaf(x_np)
            v = x
            for _ in range(steps):
                v = torch.sin(v) * 1.01
            (gx,) = backward(v.sum(), x)
            return gx, None
        return grad

    if name == "long_recurrence":
        x_np, w_val, steps = args

        def grad():
            x, w = leaf(x_np), leaf(w_val)
            v = x[0]
            for _ in range(steps):
                v = torch.sin(v) * 1.01 + 0.1 * w
            gx, gw = backward(v, x, w)
            return gx, gw, None
        return grad

    if name == "newton_sqrt":
        (a_np,) = args

        def grad():
            a = leaf(a_np)
            x = a
            active = torch.abs(x * x - a) >= 1e-12 * a
            while bool(active.any()):
                x = torch.where(active, 0.5 * (x + a / x), x)
                active = torch.abs(x * x - a) >= 1e-12 * a
            (ga,) = backward(x.sum(), a)
            return (ga,)
        return grad

    if name == "mass_spring":
        x0_np, v0_np, k_val, rest, mass, dt, steps = args

        def grad():
            v0, k = leaf(v0_np), leaf(k_val)
            x = torch.tensor(x0_np, dtype=torch.float64)
            v = v0
            zero = torch.zeros(1, dtype=torch.float64)
            for _ in range(steps):
                s = k * (x[1:] - x[:-1] - rest)
                f = torch.cat([s, zero]) - torch.cat([zero, s])
                v = v + dt * f / mass
                x = x + dt * v
            gv, gk = backward((x * x).sum(), v0, k)
            return None, gv, gk, None, None, None, None
        return grad

    if name == "mc_option":
        S0_val, sigma_val, r_val, K, T, Z_np = args
        n_paths, n_steps = Z_np.shape
        Z = torch.tensor(Z_np, dtype=torch.float64)

        def grad():
            S0, sigma, r = leaf(S0_val), leaf(sigma_val), leaf(r_val)
            dt = T / n_steps
            drift = (r - 0.5 * sigma * sigma) * dt
            vol = sigma * dt ** 0.5
            s = S0.expand(n_paths)
            for t in range(n_steps):
                s = s * torch.exp(drift + vol * Z[:, t])
            price = torch.exp(-r * T) * torch.clamp(s - K, min=0.0).mean()
            return tuple(backward(price, S0, sigma, r)) + (None, None, None)
        return grad

    if name == "logistic_regression":
        raise Unsupported("not written for this peer: the comparison for the whole-array "
                          "workload is with JAX")
    raise NotImplementedError(name)
