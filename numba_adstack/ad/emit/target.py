"""The target interface: what the rewrite asks of the platform its backward runs on.

The core of the rewrite (facts, activity, plan, emission) names no platform. Where a
decision depends on it (may the backward allocate arrays, is an accumulation into an array
adjoint shared by several threads, how does the backward end), it asks its ``Target``.
This base class is the CPU (``numba.njit``); :mod:`numba_adstack.cuda.target` implements
kernels.
"""
import ast

from numba.core import types

from ..typeinfo import is_float, is_float_array
from ..generated_source.code import expr, stmt


class Target:
    """The CPU: the function returns the value being differentiated, and its backward is an
    ordinary ``numba.njit`` function that returns ``(value, scalar gradients)``."""

    #: The function returns the value being differentiated (else: a kernel, whose outputs
    #: are the arrays it writes, seeded by the adjoints passed in).
    returns_value = True
    #: Loops whose iterations only add into sums may be reversed iteration by iteration.
    fuses_loops = True
    #: Fused ``prange`` loops may run in parallel in the backward.
    parallel_loops = True
    #: The backward may allocate arrays (adjoints of arrays the function creates).
    allocates_arrays = True
    #: Stack storage forced on every stack ("frame"), or None: chosen per stack.
    forced_storage = None
    #: A top-level time loop may be checkpointed (plan/checkpoint.py): its history kept a
    #: segment at a time, its state at a few snapshots.
    checkpoints = True
    #: Where a target that does not checkpoint keeps a loop's history (said when a loop
    #: marked ``numba_adstack.checkpoint`` keeps it whole).
    history_place = "in memory"
    #: The adjoints of array arguments are buffers the caller passes, holding what it has
    #: summed so far: the backward adds into them and never assigns an element.
    accumulates_arguments = False
    #: The generated code calls ``zmul`` (rules/template.py, the guarded product); else
    #: it is written as a conditional expression.
    guarded_product_calls = True

    def __init__(self, global_map=None):
        # Objects the IR names that the generated code must name differently (a kernel is
        # typed with stand-ins for its platform module).
        self.global_map = dict(global_map or {})

    # -- reading the IR
    def atomic_update(self, facts, stmt):
        """``(array, index, value)`` when ``stmt`` adds ``value`` into ``array[index]``
        atomically; None on the CPU."""
        return None

    def is_thread_local_constructor(self, fn):
        """Does ``fn`` create a per-thread scratch array (its adjoint is per-thread too)?"""
        return False

    def display_name(self, fn):
        """How messages name ``fn`` when it stands for another function, or None."""
        return None

    def refused_constructor(self, fn):
        """Why arrays built by ``fn`` cannot be on the gradient path, or None."""
        return None

    # -- emitting
    def module_name(self, value):
        """A fixed name for ``value`` in the generated module, or None for a fresh one."""
        return None

    def needs_atomic(self, facts, expr):
        """Must the adjoint of the element ``expr`` reads be accumulated atomically (other
        threads may read the same element)?"""
        return False

    def accumulates_privately(self, facts, expr):
        """May each thread sum its contributions to the adjoint of the element ``expr``
        reads in a local, and add that atomically once at its end?"""
        return False

    def atomic_add_statement(self, array, index, value):
        raise NotImplementedError

    def replays_store(self, facts, stmt):
        """Does the forward replay redo this store? (A kernel's forward launch already
        wrote its argument arrays.)"""
        return True

    def seeds_store(self, facts, stmt):
        """Is the adjoint of what this store writes an input of the backward (an output
        adjoint), to be read even where no useful array reads it back?"""
        return False

    def backward_params(self, facts, names):
        """Parameters of the backward after the function's own arguments: the seed, and
        whether the value is wanted (``backward.SEED_TYPES``)."""
        return ["_ret_b", "_value"]

    def backward_prologue(self, facts, names, assigned=()):
        """First lines of the backward: the arguments the function writes into are
        copied (the caller's stay as they are), the adjoints of array arguments made
        (left unset for those in ``assigned``: a loop assigns every element)."""
        out = []
        arrays = [a for a in facts.arg_vars if isinstance(facts.ty(a), types.Array)]
        for a in arrays:
            if a not in facts.written_roots:
                continue
            for b in arrays:
                if b != a and not (b in facts.written_roots and b < a):
                    # (arguments that share memory make the function one of that memory:
                    # the gradient by argument would be of another function)
                    out.append(stmt("arguments_apart({}, {}, {})", names.n(a), names.n(b),
                                    ast.Constant(_sharing_message(facts, a, b))))
        for a in facts.arg_vars:
            if a in facts.written_roots:
                out.append(stmt("{0} = {0}.copy()", names.n(a)))
        for a in facts.arg_vars:
            if is_float_array(facts.ty(a)) and not self.adjoint_given(facts, a):
                out.append(stmt("{} = np.empty_like({})" if a in assigned else
                                "{} = np.zeros_like({})", names.bar(a), names.n(a)))
        out.append(stmt("_retval = 0.0"))
        return out

    def adjoint_given(self, facts, arg):
        """Is the adjoint of array argument ``arg`` a parameter of the backward?"""
        return False

    def backward_epilogue(self, facts, activity, names, stacks, wrt):
        """Last lines of the backward: the value and one gradient per argument (an array
        for a float array, a float for a float, None otherwise or outside ``wrt``)."""
        grads = []
        for k, a in enumerate(facts.arg_vars):
            t = facts.ty(a)
            if wrt is not None and k not in wrt:
                grads.append(None)
            elif is_float_array(t):
                grads.append(names.bar(a))
            elif is_float(t):
                # ``+ 0.0`` turns an untouched adjoint (reset to -0.0) into the 0.0 users
                # expect.
                grads.append(expr("{} + 0.0", names.bar(a)) if a in activity.useful
                             else 0.0)
            else:
                grads.append(None)
        return [stmt("return _retval, {}", tuple(grads))]

    def return_statement(self, value):
        """What the forward replay does with the returned value, or None."""
        return stmt("_retval = {}", value)


CPU = Target()


class AccumulatingTarget(Target):
    """The CPU backward of ``grad_into``: the gradients of the differentiated float array
    arguments (flat indices ``wrt``) are added into buffers passed after the arguments,
    and it returns the value alone. An argument the function writes into has its own
    adjoint, added into the buffer at the end: the sweep clears the adjoint of an element
    it overwrites, which must not clear what the caller summed."""

    accumulates_arguments = True

    def __init__(self, wrt=None, global_map=None):
        super().__init__(global_map)
        self.wrt = None if wrt is None else frozenset(wrt)

    def buffered(self, facts):
        """The arguments whose gradients go into buffers, in order."""
        return [a for k, a in enumerate(facts.arg_vars)
                if (self.wrt is None or k in self.wrt) and is_float_array(facts.ty(a))]

    def _buffer(self, facts, names, a):
        return names.n(a + ".into") if a in facts.written_roots else names.bar(a)

    def backward_params(self, facts, names):
        return [self._buffer(facts, names, a) for a in self.buffered(facts)] + \
            super().backward_params(facts, names)

    def adjoint_given(self, facts, arg):
        return arg in self.buffered(facts) and arg not in facts.written_roots

    def backward_epilogue(self, facts, activity, names, stacks, wrt):
        out = []
        for a in self.buffered(facts):
            if a in facts.written_roots:
                out.append(stmt("{} += {}", self._buffer(facts, names, a), names.bar(a)))
        return out + [stmt("return _retval")]


def _sharing_message(facts, written, other):
    return ("%s writes into its argument %r, and %r shares memory with it: the gradient "
            "with respect to each is not defined; pass arrays that share none (a copy)"
            % (facts.qualname, written.split(".")[0], other.split(".")[0]))
