"""The peers: every way of computing the gradients of the workloads.

Each peer module has ``NAME``, ``REQUIRES`` (the pip requirement that
provides it, or ``None``), ``available()`` returning ``(ok, message)`` and
``build(workload, args)`` returning a function of no arguments that computes
the gradient and returns a tuple with one entry per argument of the primal
(``None`` for arguments it does not differentiate), as NumPy values.
``build`` raises ``Unsupported`` when the peer cannot express the workload,
and whatever error the peer's own library raises is recorded as is.
"""
import importlib


class Unsupported(Exception):
    """The peer cannot express this workload."""


# name -> module; "numba" is the primal (the denominator of every ratio),
# "hand" the gradient written by hand in numba (the reference).
PEER_MODULES = {
    "numba": "benchmarks.peers.numba_primal",
    "hand": "benchmarks.peers.hand",
    "ours": "benchmarks.peers.ours",
    "jax": "benchmarks.peers.jax_peer",
    "torch": "benchmarks.peers.torch_peer",
    "autograd": "benchmarks.peers.autograd_peer",
    "taichi": "benchmarks.peers.taichi_peer",
    "quadrants": "benchmarks.peers.quadrants_peer",
}

ALL_PEERS = list(PEER_MODULES)
# Peers that may take the process down with them (a segfault in their
# runtime): always measured in a subprocess.
FRAGILE = {"taichi", "quadrants"}


def load(name):
    return importlib.import_module(PEER_MODULES[name])


def module_available(module_name):
    try:
        importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or a broken install
        return False, f"{module_name} is not importable ({type(exc).__name__}: {exc})"
    return True, ""
