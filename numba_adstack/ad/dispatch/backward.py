"""The compiled backward of one argument type signature, and the services the ways of
calling it share.

:class:`Backward` reads a ``grad_jit`` function and argument types; it runs the rewrite
(:mod:`.rewrite`) on the typed IR (or loads its result from the disk cache), compiles the
backward with ``numba.njit`` and runs it: ``(value, gradients)``. ``grad`` and
``value_and_grad`` (:mod:`.api`), pullbacks (:mod:`.vjp`), ``hvp`` (forward over reverse)
and gradients called from jitted code (:mod:`.jitted`) all use it. :func:`wrt_indices` is
the normalisation of ``wrt=`` they share.
"""
import inspect
import logging
import os
import re
import sys
import time
import warnings

from numba.core import types

from ... import config
from ...errors import AdStackOverflowError, AdStackBudgetError, IntegerArgumentWarning, backward_overflow_message
from ...intrinsics import adstack, push, pop, top, size, overflowed, clear, reserve
from . import cache as disk_cache
from . import frozen
from . import progress
from ..generated_source import exec_source
from ..capture.numba_pipeline import generated_code_options
from ..facts.activity import integer_arguments_in_float_arithmetic
from ..capture.pipeline import typed_ir
from ...errors import raise_non_differentiable
from ..plan import checkpoint_schedule as CS
from ..plan.checkpoint_schedule import CheckpointNeeded
from ..plan.checkpoint import checkpoint_note

# Called with each backward and the namespace of its source once its njit function is made,
# before it is compiled (registered by ad/calls/: a recursion binds its own backward).
_DEFINITION_HOOKS = []


def register_definition_hook(hook):
    """``hook(backward, namespace)`` runs for every backward defined after this call."""
    _DEFINITION_HOOKS.append(hook)


#: Progress of gradient compiles (NUMBA_ADSTACK_VERBOSE=1 prints it).
LOG = logging.getLogger("numba_adstack")
from .rewrite import Options, build_backward
from ..capture.specialize import layout_of
from ..typeinfo import is_float, is_float_array
from .wrt import wrt_indices

#: What the backward takes after the flat arguments: the seed of the result's adjoint,
#: and whether the value is wanted (``grad`` does not want it: work done only for the
#: value is left out, emit/elementwise.py).
SEED_TYPES = (types.float64, types.boolean)
_INTRINSICS = {"adstack": adstack, "push": push, "pop": pop, "top": top, "size": size,
               "overflowed": overflowed, "clear": clear, "reserve": reserve}


class Backward:
    """The compiled backward function of one argument type signature."""

    def __init__(self, dispatcher, argtypes, parallel=None, checkpoint=None,
                 memory_budget=None, stencils=True, into=None):
        opts = dispatcher.ad_options
        # ``grad_into``: the types of the buffers the gradients of the differentiated
        # float array arguments are added into (passed after the arguments); the
        # backward returns the value alone.
        self.into = None if into is None else tuple(into)
        # Whole-array stencils in loops as primitives (capture/stencils.py); off for the
        # backward that forward mode differentiates again (hvp): their pullbacks have no
        # tangent rule.
        self.stencils = stencils
        if checkpoint is not None:      # the checkpointed variant of an "auto" backward
            opts = dict(opts, checkpoint=checkpoint)
        if memory_budget is not None:   # a variant made after memory ran out
            opts = dict(opts, memory_budget=int(memory_budget))
        self.argtypes = argtypes
        self.dispatcher = dispatcher
        if parallel is None:
            parallel = bool(dispatcher.targetoptions.get("parallel"))
        # Tuple arguments taken apart, function arguments bound: the backward takes the
        # flat arguments (specialize.py); None when they are the arguments themselves.
        self.layout = layout_of(dispatcher.py_func, argtypes)
        self.flat_types = tuple(self.layout.flat_types)
        self.arg_wrt = wrt_indices(dispatcher.py_func, opts["wrt"])
        wrt = self.layout.flat_wrt(self.arg_wrt)
        self.wrt = range(len(self.flat_types)) if wrt is None else wrt
        self.qualname = dispatcher.py_func.__qualname__
        self.opts = opts
        self._serial = None
        self._checkpointed = None
        self._recovered = {}
        # The budget the plan reads when none is given (plan.checkpoint): a retry after
        # memory ran out asks for less than it.
        given = opts.get("memory_budget")
        self.memory_budget = given if given is not None and given >= 0 else \
            config.default_memory_budget()
        # With cache=True, a fresh entry on disk stands in for the rewrite, and Numba's
        # cache for LLVM.
        entry = None if checkpoint is not None or memory_budget is not None \
            or into is not None else disk_cache.lookup(dispatcher, argtypes, parallel)
        with progress.compiling(self.qualname, self.argtypes):
            self._build(entry, wrt, parallel)

    def _build(self, entry, wrt, parallel):
        """Rewrite (or load) and compile the backward (see :meth:`__init__`)."""
        started = time.perf_counter()
        gen = entry.load() if entry is not None else None
        self.from_disk = gen is not None
        if gen is None:
            gen = self._generate(wrt, parallel)
        gen.globals = frozen.as_frozen(gen.globals,
                                       self.dispatcher._frozen.get(self.argtypes, {}))
        self.fname, self.source = gen.fname, gen.source
        self.checkpoint_note = gen.checkpoint_note
        # checkpoint="auto" with a loop guarded by the memory budget (its guard raises
        # CheckpointNeeded, which run() answers with the checkpointed variant).
        self.guarded = any(v is CS.guard or v is CS.guard_count
                           for v in gen.globals.values())
        self.written_args = gen.written_args
        self.float_array_args = gen.float_array_args
        self.float_scalar_args = gen.float_scalar_args
        if gen.integer_float_args:
            _warn_integer_arguments(self.qualname, gen.integer_float_args,
                                    self.flat_types)
        text = self.source
        ns = entry.namespace(gen, text, _INTRINSICS) if entry is not None else None
        cached = ns is not None
        if not cached:
            ns = dict(gen.globals)
            ns.update(_INTRINSICS)
            exec_source(self.fname, text, ns, self.qualname)
        compiling = time.perf_counter()
        progress.phase("compiling the backward (%d lines) with Numba"
                       % self.source.count("\n"), self.qualname, self.argtypes)
        self._compile(ns, gen.helpers, gen.inlined, cached)
        if cached:
            entry.commit(gen)
        done = time.perf_counter()
        LOG.info("gradient of %s(%s): %s %.2f s, compiled in %.2f s (%d lines)",
                 self.qualname, ", ".join(map(str, self.argtypes)),
                 "loaded from disk" if self.from_disk else
                 "rewritten", compiling - started, done - compiling,
                 self.source.count("\n"))

    def _generate(self, wrt, parallel):
        """The backward's source and facts, from the rewrite of the typed IR."""
        py_func = self.dispatcher.py_func
        if py_func.__code__.co_flags & inspect.CO_VARARGS:
            code = py_func.__code__
            raise_non_differentiable(
                py_func.__qualname__,
                "it takes *%s; the gradient is given per parameter, so give the extra "
                "arguments as one tuple parameter (def f(a, args): ... f(a, (b, c))), or "
                "call f from a function that names them"
                % code.co_varnames[code.co_argcount + code.co_kwonlyargcount])
        progress.phase("capturing the typed IR", self.qualname, self.argtypes)
        typed = typed_ir(py_func, self.argtypes,
                         layout=None if self.layout.trivial else self.layout,
                         locals=self.dispatcher.locals,
                         pipeline_class=self.dispatcher._compiler.pipeline_class,
                         stencils=self.stencils)
        progress.phase("rewriting (facts, plan, backward)", self.qualname, self.argtypes)
        rw = build_backward(typed, py_func,
                            Options(self.opts["ad_stack_size"], self.opts["storage"],
                                    wrt=wrt, parallel=parallel,
                                    frame_budget=self.opts["frame_budget"],
                                    checkpoint=self.opts.get("checkpoint", "auto"),
                                    snapshots=self.opts.get("snapshots"),
                                    memory_budget=self.opts.get("memory_budget"),
                                    checked=_checked(self.dispatcher.backward_options),
                                    into=self.into is not None,
                                    ieee_products=self.opts.get("ieee_products", False)))
        facts = rw.facts
        args = facts.arg_vars
        gen = disk_cache.Generated(
            rw.fname, rw.source, rw.helpers, rw.inlined,
            # Arguments the function writes into: the gradient pass works on copies.
            [i for i, a in enumerate(args) if a in facts.written_roots],
            [i for i, a in enumerate(args) if is_float_array(facts.ty(a))],
            [i for i, a in enumerate(args) if is_float(facts.ty(a))],
            [(i, args[i]) for i in integer_arguments_in_float_arithmetic(facts, wrt)],
            rw.globals, checkpoint_note=checkpoint_note(rw.plan))
        return gen

    def _compile(self, ns, helpers, inlined, cache):
        parallel = bool(helpers) or "numba.prange(" in self.source
        self.njit_options = generated_code_options(
            self.dispatcher.backward_options, self.dispatcher.targetoptions, parallel)
        # Helpers of parallel loops are called from the backward's prange loops: compiled
        # first, by name, and the backward is compiled parallel. A straight-line helper is
        # inlined into the loop body (a call per iteration cost a map loop twice its serial
        # time); one with inner loops or branches is called (emit.parallel.straight_helpers).
        for helper in helpers:
            options = dict(self.njit_options, inline="always" if helper in inlined else "never")
            ns[helper] = disk_cache.jit(ns[helper], options, cache)
        # (a prange loop the replay runs as the primal does: plan/parallel_replay.py)
        if parallel:
            self.njit_options["parallel"] = True
        self.parallel = parallel
        self.njit_fn = disk_cache.jit(ns[self.fname], self.njit_options, cache)
        for hook in _DEFINITION_HOOKS:      # (a backward that calls itself binds itself)
            hook(self, ns)
        budget = self.opts["frame_budget"]
        with config.frame_budget(budget if budget is not None else config.get_frame_budget()):
            try:
                self.njit_fn.compile(self.flat_types + (self.into or ()) + SEED_TYPES)
            except AdStackBudgetError as e:
                raise AdStackBudgetError(
                    "the backward pass of %r: %s" % (self.qualname, e)) from None

    def __call__(self, args, seed=1.0, value=True):
        try:
            return self.run(args, seed, value)
        except AdStackOverflowError as e:
            raise overflow_error(self.dispatcher, e) from None

    def run(self, args, seed=1.0, value=True):
        """``(value, gradients)``, regrouped as the arguments; an overflow as the stack
        raised it (``__call__`` and ``grad`` name the function and the fixes).
        ``value=False``: the value is not wanted (the backward may leave out work done for
        it alone, and return any number)."""
        try:
            if self.layout.trivial:
                return self._run(args, seed, value)
            out, grads = self._run(self.layout.flatten(args), seed, value)
        except MemoryError as e:
            raise named_memory_error(self.qualname, e) from None
        return out, self.layout.regroup(grads, self.arg_wrt)

    def checkpointed(self, mode="revolve"):
        """The variant that checkpoints the loops this one guards (made once per mode):
        ``"revolve"``, or ``"fit"`` (for jitted callers, which cannot make the call again:
        a loop of unknown trip count keeps its history while it fits the budget)."""
        if self._checkpointed is None:
            self._checkpointed = {}
        if mode not in self._checkpointed:
            # (under the budget its guard compared with, measured when this was made)
            self._checkpointed[mode] = Backward(self.dispatcher, self.argtypes,
                                                parallel=self.parallel, checkpoint=mode,
                                                memory_budget=self.memory_budget,
                                                stencils=self.stencils, into=self.into)
        return self._checkpointed[mode]

    def _run(self, args, seed, value=True):
        try:
            # The backward copies what it writes, allocates the adjoints and returns
            # (value, gradients): one Numba call.
            return self.njit_fn(*args, seed, value)
        except CheckpointNeeded:
            # A loop's history is past the memory budget: the backward that checkpoints
            # it (made once, on the first call that needs it).
            return self.checkpointed()._run(args, seed, value)
        except AdStackOverflowError:
            raise
        except MemoryError as e:
            if self.parallel:       # per-thread adjoint copies past their limit
                return self._run_serially(args, seed, value)
            # The history did not fit after all (a limit the budget did not see, memory
            # taken by others since): run the call again checkpointed under less.
            return self._recover(args, seed, value, e)
        except Exception:
            if not self.parallel:
                raise
            # An exception inside a parallel region reaches Python as a bare SystemError:
            # run the serial backward, which raises the real one (an overflow, a user
            # raise) or, if the error does not happen again, gives the gradient.
            return self._run_serially(args, seed, value)

    def _run_serially(self, args, seed, value):
        if self._serial is None:
            self._serial = Backward(self.dispatcher, self.argtypes, parallel=False,
                                    stencils=self.stencils, into=self.into)
        return self._serial._run(args, seed, value)


    def recover(self, args, seed, value, exc):
        """``run`` after its call raised ``exc``, a MemoryError, outside :meth:`run` (the
        signature table calls the compiled backward directly): the call made again
        checkpointed under a budget that fits, or ``exc`` named."""
        try:
            if self.layout.trivial:
                return self._recover(args, seed, value, exc)
            out, grads = self._recover(self.layout.flatten(args), seed, value, exc)
        except MemoryError as e:
            raise named_memory_error(self.qualname, e) from None
        return out, self.layout.regroup(grads, self.arg_wrt)

    def _recover(self, args, seed, value, exc):
        if isinstance(exc, HistoryDoesNotFit) or isinstance(exc, CheckpointNeeded) or \
                self.opts.get("checkpoint", "auto") == "off" or not self.checkpoint_note:
            raise exc           # nothing to checkpoint: the error names the function
        given = self.opts.get("memory_budget")
        prior = given if given is not None and given >= 0 else self.memory_budget
        if _STATE_TOO_LARGE.search(str(exc)):
            # The state (or one iteration) is past the budget: past the cap of the
            # default budget, the memory there is may still hold it.
            room = int(config.available_memory() * config.MEMORY_BUDGET_FRACTION)
            if given is not None or room <= prior:
                raise HistoryDoesNotFit(self._state_message(prior, str(exc))) from None
            budget = room
        else:
            # Re-measured now that the failed call's history is freed, and at most half
            # the budget that failed, so that each try asks for less; a power of two, so
            # that calls share the variants.
            budget = min(config.default_memory_budget(), prior // 2)
            budget = 1 << max(budget, 1).bit_length() - 1
            if budget < _LEAST_BUDGET:
                raise HistoryDoesNotFit(self._state_message(budget, str(exc))) from None
        variant = self._recovered.get(budget)
        if variant is None:
            mode = self.opts.get("checkpoint", "auto")
            variant = self._recovered[budget] = Backward(
                self.dispatcher, self.argtypes, parallel=self.parallel,
                checkpoint="revolve" if mode == "auto" else mode, memory_budget=budget,
                stencils=self.stencils, into=self.into)
        return variant._run(args, seed, value)

    def _state_message(self, budget, why):
        found = re.search(r"state: ([^;)]*)", self.checkpoint_note)
        line = re.search(r"# loop( at line \d+)", self.checkpoint_note)
        return ("the gradient of %r: the history of the loop%s does not fit in memory, "
                "and checkpointed under a memory budget of %s bytes it does not fit "
                "either: the state it carries from one iteration to the next (%s) must "
                "fit twice, and one iteration's history once, within the budget (%s). "
                "Give the process more memory (ulimit -v, the cgroup's memory limit), or "
                "carry less state through the loop"
                % (self.qualname, line.group(1) if line else "",
                   "unknown" if budget is None else budget,
                   found.group(1) if found else "unknown", why.rstrip(".")))


class HistoryDoesNotFit(MemoryError):
    """Memory ran out, and checkpointing the loop under less did not help: the state it
    carries does not fit."""


#: The messages of the checkpointed schedules when even the state does not fit
#: (checkpoint_schedule.plan_schedule, online_plan).
_STATE_TOO_LARGE = re.compile(r"two snapshots of the loop's state|one iteration of the "
                              r"checkpointed loop keeps more")
#: Below it, a retry is not made: the state or one iteration is what does not fit.
_LEAST_BUDGET = 1 << 12


def named_memory_error(qualname, exc):
    """``exc``, a MemoryError of a backward, with the function's name in its message (the
    checks of compiled code raise constant messages); a CheckpointNeeded as it is."""
    if isinstance(exc, CheckpointNeeded) or repr(qualname) in str(exc) or \
            "'%s_backward'" % qualname in str(exc):
        return exc
    return MemoryError("the gradient of %r: %s" % (qualname, exc))


def overflow_error(dispatcher, exc):
    """The error ``grad`` raises when a fixed-size stack of ``dispatcher``'s backward
    overflowed (``exc``, as the stack raised it)."""
    return AdStackOverflowError(backward_overflow_message(
        dispatcher.py_func.__qualname__, dispatcher.ad_options, exc))


def _warn_integer_arguments(qualname, args, argtypes):
    """Once per signature: integer arguments in float arithmetic get no gradient."""
    names = ", ".join(repr(name) for _, name in args)
    arrays = [name for i, name in args if isinstance(argtypes[i], types.Array)]
    scalars = len(arrays) < len(args)
    how = " or ".join(
        (["a float (2.0, not 2)"] if scalars else []) +
        (["a float array (`%s.astype(np.float64)`, or `np.array(..., dtype=np.float64)`)"
          % arrays[0]] if arrays else []))
    warnings.warn(
        "%s: integer %sargument %s takes part in float arithmetic, but integers are not "
        "differentiated, so its gradient is None. To differentiate it, pass %s; to say "
        "it is a constant, give wrt= without it"
        % (qualname, "array " if arrays and not scalars else "", names, how),
        IntegerArgumentWarning, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The ``stacklevel`` of the first caller outside this package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _checked(numba_options):
    """Does the backward check its reads of adjoint arrays and its accumulations
    (Numba's ``boundscheck=True`` or ``debug=True``, or NUMBA_ADSTACK_CHECKED=1: see
    emit/checked.py)?"""
    return bool(numba_options.get("boundscheck") or numba_options.get("debug")
                or config.checked_backwards())
