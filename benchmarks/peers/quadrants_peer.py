"""Quadrants (a Taichi fork) on the CPU: kernel() then kernel.grad(), adstack sized per workload."""
from . import module_available

NAME = "quadrants"
REQUIRES = "quadrants==1.3.3"


def available():
    return module_available("quadrants")


def build(workload, args):
    import quadrants as qd
    from ._taichi_style import build as build_kernels
    return build_kernels(qd, workload, args)
