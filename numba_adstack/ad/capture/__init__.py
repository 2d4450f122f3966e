"""Capture: the typed SSA Numba IR of a function, as the reverse-mode rewrite reads it
(:mod:`.pipeline`), with the statement rewrites that run before typing (loop forms, library
calls, writes made explicit, plain builtins, items of tuples and lists) and the
specialisation of arguments. The lowest phase of ``ad/``: it imports no other phase."""
