"""GradBench's problems written as Numba users write them (see each module's docstring)."""
