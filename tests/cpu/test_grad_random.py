"""Random draws: a draw is kept, never drawn again (a loop the reverse sweep would run
again, or a checkpointed segment, would draw other numbers), and the parameters of
np.random.normal, uniform and exponential are differentiated as reparameterised draws.
Against central finite differences of the function, which seeds its generator."""
import numpy as np

import numba_adstack as nad

from conftest import check_fd


@nad.grad_jit
def map_loop_of_draws(mu, sigma, n):
    np.random.seed(1)
    out = np.empty(n)
    for i in range(n):
        out[i] = mu + sigma * np.random.standard_normal()
    return np.sqrt(np.sum(out * out))       # the map loop would be run again


@nad.grad_jit
def sums_of_draws(mu, sigma, n):
    np.random.seed(1)
    s = 0.0
    for i in range(n):
        v = mu + sigma * np.random.standard_normal()
        s += v * v
    return np.sqrt(s)                       # the loop of sums would be run again


def walk(mu, sigma, n):
    np.random.seed(1)
    x = mu
    for i in range(n):
        x = x * 0.9 + sigma * np.random.standard_normal() * 0.1 + 0.01 * np.sin(x)
    return x


@nad.grad_jit
def reparameterised(mu, sigma, lo, n):
    np.random.seed(3)
    s = 0.0
    for i in range(n):
        v = np.random.normal(mu, sigma)
        s += v * v + np.random.uniform(lo, lo + sigma) ** 2 + np.sin(np.random.exponential(sigma))
    z = np.random.normal(mu, sigma, 4)
    u = np.random.uniform(lo, sigma, 3)
    e = np.random.exponential(sigma, 2)
    return s + np.sum(z * z) + np.sum(u ** 3) + np.sum(np.sqrt(e))


def test_draws_are_kept_not_drawn_again():
    check_fd(map_loop_of_draws, 0.5, 2.0, 5)
    check_fd(sums_of_draws, 0.5, 2.0, 5)


def test_a_loop_that_draws_is_not_checkpointed():
    check_fd(nad.grad_jit(checkpoint="revolve", snapshots=2)(walk), 0.5, 2.0, 20)


def test_parameters_of_draws_are_reparameterised():
    check_fd(reparameterised, 0.5, 2.0, 0.3, 4)
