"""``grad_jit``: a Numba dispatcher that also differentiates.

``GradDispatcher`` is a ``CPUDispatcher``: calling it, calling it from other jitted
functions, ``inspect_llvm`` and friends behave exactly as with ``numba.njit``. It adds
``grad``, ``value_and_grad`` and ``inspect_adjoint``; the backward function of each argument
type signature is generated once (from the typed Numba IR), compiled with ``numba.njit`` and
cached.
"""
import ast
import inspect
import linecache
import numbers
import os
import sys
import threading
import warnings

from numba.core import types
from numba.core.options import TargetOptions
from numba.core.registry import CPUDispatcher

from .. import config
from ..errors import (AdStackOverflowError, AdStackBudgetError, IntegerArgumentWarning,
                      backward_overflow_message)
from ..intrinsics import adstack, push, pop, top, size, overflowed, clear, reserve
from . import cache as disk_cache
from . import frozen
from . import vjp as _vjp
from .numba_pipeline import GeneratedCodeCompiler
from .activity import integer_arguments_in_float_arithmetic
from .capture import typed_ir
from . import checkpoint_schedule as CS
from .checkpoint_schedule import CheckpointNeeded
from .plan.checkpoint import checkpoint_note
from .rewrite import Options, build_backward
from .signatures import BackwardTable
from .specialize import by_fingerprint, layout_of
from .typeinfo import is_float, is_float_array

_INTRINSICS = {"adstack": adstack, "push": push, "pop": pop, "top": top, "size": size,
               "overflowed": overflowed, "clear": clear, "reserve": reserve}
_source_counter = [0]
_lock = threading.Lock()


def exec_source(fname, source, namespace, tag):
    """Define ``fname`` from generated source; keep the text where ``inspect`` finds it."""
    with _lock:
        _source_counter[0] += 1
        filename = "<numba_adstack %s %d>" % (tag, _source_counter[0])
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[fname]


def _helpers_to_inline(source):
    """Names of the functions defined in ``source`` that hold at most one loop (a parallel
    loop's iteration helper is one ``while True`` shell around the iteration's body) and
    no branch but that shell's: inlined into a prange body, an iteration that branches
    had its adjoints accumulate across iterations in Numba's parfor lowering (a wrong
    gradient), so such a helper is called instead."""
    out = set()
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        loops = sum(isinstance(n, (ast.For, ast.While)) for n in ast.walk(node))
        branches = sum(isinstance(n, (ast.If, ast.IfExp)) for n in ast.walk(node))
        if loops <= 1 and branches <= 1:
            out.add(node.name)
    return out

class Backward:
    """The compiled backward function of one argument type signature."""

    def __init__(self, dispatcher, argtypes, parallel=None, checkpoint=None):
        opts = dispatcher.ad_options
        if checkpoint is not None:      # the checkpointed variant of an "auto" backward
            opts = dict(opts, checkpoint=checkpoint)
        self.argtypes = argtypes
        self.dispatcher = dispatcher
        if parallel is None:
            parallel = bool(dispatcher.targetoptions.get("parallel"))
        # Tuple arguments taken apart, function arguments bound: the backward takes the
        # flat arguments (specialize.py); None when they are the arguments themselves.
        self.layout = layout_of(dispatcher.py_func, argtypes)
        self.flat_types = tuple(self.layout.flat_types)
        self.arg_wrt = _wrt_indices(dispatcher.py_func, opts["wrt"])
        wrt = self.layout.flat_wrt(self.arg_wrt)
        self.wrt = range(len(self.flat_types)) if wrt is None else wrt
        self.qualname = dispatcher.py_func.__qualname__
        self.opts = opts
        self._serial = None
        self._checkpointed = None
        # With cache=True, a fresh entry on disk stands in for the rewrite, and Numba's
        # cache for LLVM.
        entry = None if checkpoint is not None else \
            disk_cache.lookup(dispatcher, argtypes, parallel)
        gen = entry.load() if entry is not None else None
        self.from_disk = gen is not None
        if gen is None:
            gen = self._generate(wrt, parallel)
        gen.globals = frozen.as_frozen(gen.globals, dispatcher._frozen.get(argtypes, {}))
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
            _warn_integer_arguments(self.qualname, gen.integer_float_args)
        text = self.source
        ns = entry.namespace(gen, text, _INTRINSICS) if entry is not None else None
        cached = ns is not None
        if not cached:
            ns = dict(gen.globals)
            ns.update(_INTRINSICS)
            exec_source(self.fname, text, ns, self.qualname)
        self._compile(ns, gen.helpers, cached)
        if cached:
            entry.commit(gen)

    def _generate(self, wrt, parallel):
        """The backward's source and facts, from the rewrite of the typed IR."""
        py_func = self.dispatcher.py_func
        typed = typed_ir(py_func, self.argtypes,
                         layout=None if self.layout.trivial else self.layout)
        rw = build_backward(typed, py_func,
                            Options(self.opts["ad_stack_size"], self.opts["storage"],
                                    wrt=wrt, parallel=parallel,
                                    frame_budget=self.opts["frame_budget"],
                                    checkpoint=self.opts.get("checkpoint", "auto"),
                                    snapshots=self.opts.get("snapshots"),
                                    memory_budget=self.opts.get("memory_budget"),
                                    checked=_checked(self.dispatcher.backward_options)))
        facts = rw.facts
        args = facts.arg_vars
        gen = disk_cache.Generated(
            rw.fname, rw.source, rw.helpers,
            # Arguments the function writes into: the gradient pass works on copies.
            [i for i, a in enumerate(args) if a in facts.written_roots],
            [i for i, a in enumerate(args) if is_float_array(facts.ty(a))],
            [i for i, a in enumerate(args) if is_float(facts.ty(a))],
            [(i, args[i]) for i in integer_arguments_in_float_arithmetic(facts, wrt)],
            rw.globals, checkpoint_note=checkpoint_note(rw.plan))
        return gen

    def _compile(self, ns, helpers, cache):
        self.njit_options = dict(self.dispatcher.backward_options)
        self.njit_options.setdefault("pipeline_class", GeneratedCodeCompiler)
        # Helpers of parallel loops are called from the backward's prange loops: compiled
        # first, by name, and the backward is compiled parallel. A straight-line helper is
        # inlined into the loop body (a call per iteration cost a map loop twice its serial
        # time); one with inner loops or branches is called (see _helpers_to_inline).
        inlined = _helpers_to_inline(self.source)
        for helper in helpers:
            options = dict(self.njit_options, inline="always" if helper in inlined else "never")
            ns[helper] = disk_cache.jit(ns[helper], options, cache)
        if helpers:
            self.njit_options["parallel"] = True
            # Numba's parfor passes expect its whole pipeline, SSA included.
            if self.njit_options["pipeline_class"] is GeneratedCodeCompiler:
                del self.njit_options["pipeline_class"]
        self.parallel = bool(helpers)
        self.njit_fn = disk_cache.jit(ns[self.fname], self.njit_options, cache)
        budget = self.opts["frame_budget"]
        with config.frame_budget(budget if budget is not None else config.get_frame_budget()):
            try:
                self.njit_fn.compile(self.flat_types + (types.float64,))
            except AdStackBudgetError as e:
                raise AdStackBudgetError(
                    "the backward pass of %r: %s" % (self.qualname, e)) from None

    def __call__(self, args, seed=1.0):
        try:
            return self.run(args, seed)
        except AdStackOverflowError as e:
            raise overflow_error(self.dispatcher, e) from None

    def run(self, args, seed=1.0):
        """``(value, gradients)``, regrouped as the arguments; an overflow as the stack
        raised it (``__call__`` and ``grad`` name the function and the fixes)."""
        if self.layout.trivial:
            return self._run(args, seed)
        value, grads = self._run(self.layout.flatten(args), seed)
        return value, self.layout.regroup(grads, self.arg_wrt)

    def checkpointed(self, mode="revolve"):
        """The variant that checkpoints the loops this one guards (made once per mode):
        ``"revolve"``, or ``"fit"`` (for jitted callers, which cannot make the call again:
        a loop of unknown trip count keeps its history while it fits the budget)."""
        if self._checkpointed is None:
            self._checkpointed = {}
        if mode not in self._checkpointed:
            self._checkpointed[mode] = Backward(self.dispatcher, self.argtypes,
                                                parallel=self.parallel, checkpoint=mode)
        return self._checkpointed[mode]

    def _run(self, args, seed):
        try:
            # The backward copies what it writes, allocates the adjoints and returns
            # (value, gradients): one Numba call.
            return self.njit_fn(*args, seed)
        except CheckpointNeeded:
            # A loop's history is past the memory budget: the backward that checkpoints
            # it (made once, on the first call that needs it).
            return self.checkpointed()._run(args, seed)
        except AdStackOverflowError:
            raise
        except Exception:
            if not self.parallel:
                raise
            # An exception inside a parallel region reaches Python as a bare SystemError:
            # run the serial backward, which raises the real one (an overflow, a user
            # raise) or, if the error does not happen again, gives the gradient.
            if self._serial is None:
                self._serial = Backward(self.dispatcher, self.argtypes, parallel=False)
            return self._serial._run(args, seed)


def overflow_error(dispatcher, exc):
    """The error ``grad`` raises when a fixed-size stack of ``dispatcher``'s backward
    overflowed (``exc``, as the stack raised it)."""
    return AdStackOverflowError(backward_overflow_message(
        dispatcher.py_func.__qualname__, dispatcher.ad_options, exc))


def _warn_integer_arguments(qualname, args):
    """Once per signature: integer arguments in float arithmetic get no gradient."""
    names = ", ".join(repr(name) for _, name in args)
    warnings.warn(
        "%s: integer argument %s takes part in float arithmetic, but integers are not "
        "differentiated, so its gradient is None. To differentiate it, pass a float (2.0, "
        "not 2); to say it is a constant, give wrt= without it" % (qualname, names),
        IntegerArgumentWarning, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The ``stacklevel`` of the first caller outside this package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


class GradDispatcher(CPUDispatcher):
    """``numba.njit`` dispatcher with ``grad``, ``value_and_grad`` and ``inspect_adjoint``."""

    def __init__(self, py_func, locals=None, targetoptions=None, ad_options=None, **kw):
        super().__init__(py_func, locals=locals or {}, targetoptions=targetoptions or {},
                         **kw)
        self.ad_options = ad_options or {"ad_stack_size": None,
                                         "storage": "auto", "frame_budget": None,
                                         "wrt": None, "cache": False}
        self.backward_options = {k: v for k, v in (targetoptions or {}).items()
                                 if k not in ("nopython", "parallel", "inline")}
        # Derivatives are infinite or undefined where the primal is not (0.5 / sqrt(x) at
        # 0, a mean over no elements): inf or NaN, as NumPy and JAX give, not a bare
        # ZeroDivisionError from the generated code. The user's error_model wins.
        self.backward_options.setdefault("error_model", "numpy")
        self._signature = inspect.signature(py_func)
        self._backwards = {}           # by Numba argument types
        self._by_fingerprint = {}      # the same, by Numba's fast argument fingerprints
        self._bw_lock = threading.Lock()
        self._frozen = {}              # by argument types: the global arrays compiled in
        self._table = BackwardTable(self)  # the same, for grad's C dispatch
        self._table_nargs = self._table.nargs

    def add_overload(self, cres):
        # The global arrays as this signature's machine code freezes them (frozen.py).
        self._frozen.setdefault(tuple(cres.signature.args), frozen.snapshot(self.py_func))
        super().add_overload(cres)

    def _reduce_states(self):
        # Pickled (to a worker process) with its options, as Numba pickles its own.
        return dict(super()._reduce_states(), ad_options=self.ad_options)

    @classmethod
    def _rebuild(cls, uuid, py_func, locals, targetoptions, can_compile, sigs,
                 ad_options=None):
        try:
            return cls._memo[uuid]
        except KeyError:
            pass
        self = cls(py_func, locals, targetoptions, ad_options=ad_options)
        if self.ad_options.get("cache"):
            disk_cache.enable(self, strict=False)   # not where the source is unreachable
        self._set_uuid(uuid)
        for sig in sigs:
            self.compile(sig)
        self._can_compile = can_compile
        return self

    def _backward(self, args):
        return by_fingerprint(self._by_fingerprint, args, self.backward_for_types)

    def backward_for_types(self, argtypes):
        """The :class:`Backward` of one argument type signature, built once."""
        key = tuple(argtypes)
        bw = self._backwards.get(key)
        if bw is None:
            with self._bw_lock:
                bw = self._backwards.get(key)
                if bw is None:
                    if key not in self._frozen and frozen.reads_arrays(self.py_func):
                        self.compile(key)       # global arrays frozen once, for both
                    bw = Backward(self, key)
                    self._backwards[key] = bw
        return bw

    def _all_args(self, args, kwargs):
        """Positional arguments, with keyword arguments and defaults filled in as Python
        binds them."""
        code = self.py_func.__code__
        if not kwargs and len(args) == code.co_argcount:
            return args
        params = self._signature.parameters
        unknown = [k for k in kwargs if k not in params]
        if unknown:
            raise TypeError("%s got an unexpected keyword argument %r; its parameters are "
                            "(%s)" % (self.py_func.__qualname__, unknown[0],
                                      ", ".join(params)))
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args

    def grad(self, *args, **kwargs):
        """Gradient of the (float scalar) result with respect to every argument: an array
        for each float array argument, a float for each float scalar, None otherwise."""
        try:
            if not kwargs and len(args) == self._table_nargs:
                # Numba's C dispatch finds the backward of these types (signatures.py).
                return self._table(*args, 1.0)[1]
            return self.call_backward(*self._all_args(args, kwargs), 1.0)[1]
        except CheckpointNeeded:
            # A loop's history is past the memory budget: Backward.run checkpoints it.
            return self.call_backward(*self._all_args(args, kwargs), 1.0)[1]
        except AdStackOverflowError as e:
            raise overflow_error(self, e) from None

    def value_and_grad(self, *args, **kwargs):
        """``(f(*args), f.grad(*args))`` from one forward replay."""
        try:
            if not kwargs and len(args) == self._table_nargs:
                return self._table(*args, 1.0)
            return self.call_backward(*self._all_args(args, kwargs), 1.0)
        except CheckpointNeeded:
            # A loop's history is past the memory budget: Backward.run checkpoints it.
            return self.call_backward(*self._all_args(args, kwargs), 1.0)
        except AdStackOverflowError as e:
            raise overflow_error(self, e) from None

    def call_backward(self, *args):
        """``(value, gradients)`` for the arguments and the seed (last), through the
        interpreter: the calls the backward table does not hold."""
        *args, seed = args
        args = self._all_args(tuple(args), {})
        return self._backward(args).run(args, seed)

    def inspect_adjoint(self, *args, **kwargs):
        """Source of the backward function generated for these arguments (after a note of
        the loops it checkpoints, if any)."""
        bw = self._backward(self._all_args(args, kwargs))
        return bw.checkpoint_note + bw.source

    # -- vector-Jacobian products (numba_adstack.ad.vjp)
    def vjp(self, *args, **kwargs):
        """``(f(*args), pullback)``: ``pullback(cotangent)`` gives the tuple of input
        cotangents (as ``grad`` gives gradients) for a cotangent shaped like the output (a
        float, an array, or a tuple of them; None for integer outputs)."""
        return _vjp.vjp(self, self._all_args(args, kwargs))

    def vjp_call(self, *args, **kwargs):
        """``f.vjp(*args)[1](cotangent)`` in one call, the cotangent passed last: for loops
        that call it many times (nothing is compiled after the first call)."""
        if not args:
            raise TypeError("vjp_call of %s needs the arguments and a cotangent"
                            % self.py_func.__qualname__)
        *args, cotangent = args
        return _vjp.vjp_call(self, self._all_args(tuple(args), kwargs), cotangent)

    # ---------------------------------------------------------------- forward mode
    # (numba_adstack/ad/forward/: the forward-mode rewrite, hvp and jacobian)
    def jvp(self, args, tangents):
        """``(f(*args), tangent)``: the derivative of ``f`` at ``args`` along ``tangents``
        (one per argument: a float for a float, an array of the same shape and dtype for a
        float array, None for arguments not differentiated). The tangent mirrors the
        value: a float, an array or a tuple."""
        from .forward.jvp import jvp
        return jvp(self, self._all_args(tuple(args), {}), tangents)

    def hvp(self, args, v):
        """The Hessian of the (float scalar) result at ``args`` times ``v`` (one tangent
        per argument, as for ``jvp``), shaped as ``f.grad(*args)``."""
        from .forward.derived import hvp
        return hvp(self, self._all_args(tuple(args), {}), v)

    def inspect_jvp(self, args, tangents):
        """Source of the JVP function generated for these arguments and tangents."""
        from .forward.jvp import check_tangents, jvp_for
        args = self._all_args(tuple(args), {})
        _, wrt, layout = check_tangents(self, args, tangents)
        return jvp_for(self, args, wrt, layout).source


def _wrt_indices(py_func, wrt):
    """Argument indices from ``wrt`` (names, or indices counted as Python counts them:
    -1 is the last argument), or None for every argument. Anything else is a
    ``ValueError`` naming the entry and the function's parameters."""
    if wrt is None:
        return None
    if isinstance(wrt, (str, numbers.Integral)):
        wrt = (wrt,)
    names = py_func.__code__.co_varnames[:py_func.__code__.co_argcount]
    try:
        entries = list(wrt)
    except TypeError:
        entries = [wrt]
    out = set()
    for w in entries:
        if isinstance(w, str) and w in names:
            out.add(names.index(w))
        elif isinstance(w, numbers.Integral) and not isinstance(w, bool) \
                and -len(names) <= w < len(names):
            out.add(int(w) % len(names))
        else:
            raise ValueError(
                "wrt=%r: %r is not an argument of %s(%s); give argument names or indices "
                "from %d to %d" % (wrt, w, py_func.__name__, ", ".join(names), -len(names),
                                   len(names) - 1))
    return frozenset(out)


def _numba_options():
    """The options ``numba.njit`` passes to its CPU target (fastmath, nogil, ...)."""
    opts = CPUDispatcher.targetdescr.options
    return {k for k in dir(opts) if isinstance(getattr(opts, k), TargetOptions.Mapping)}


def _checked(numba_options):
    """Does the backward check its reads of adjoint arrays (Numba's ``boundscheck=True``
    or ``debug=True``, see emit/checked.py)?"""
    return bool(numba_options.get("boundscheck") or numba_options.get("debug"))


def grad_jit(fn=None, *, ad_stack_size=None, storage="auto", frame_budget=None, wrt=None,
             checkpoint="auto", snapshots=None, memory_budget=None, **options):
    """Decorator like ``numba.njit`` that also gives ``f.grad`` and ``f.value_and_grad``.

    storage
        ``"auto"`` (the default): every stack sizes itself, from constant trip counts at
        compile time, from the trip count of a loop when it starts, or by growing; it
        never overflows. ``"frame"``: fixed-size stacks in the backward function's frame,
        checked against the frame budget, an overflow past ``ad_stack_size`` is an error.
        ``"heap"``: every stack is a growable heap buffer.
    ad_stack_size
        Advanced: a fixed capacity for the stacks of loops whose trip count is only known
        at run time (frame storage unless ``storage="heap"``; default with
        ``storage="frame"``: ``numba_adstack.config.DEFAULT_AD_STACK_SIZE``).
    frame_budget
        Bytes of frame adstacks the backward function may use (default
        ``numba_adstack.config`` / NUMBA_ADSTACK_FRAME_BUDGET). By default stacks past it
        go to the heap; with fixed capacities, past it is an ``AdStackBudgetError``.
    wrt
        The arguments to differentiate (names or indices; default: all). The others get
        None in the gradient tuple, and the backward does no work for them.
    checkpoint
        Checkpointing of a top-level ``for`` loop over a range (a time loop): ``"auto"``
        (the default) keeps its history as usual while the projected history fits the
        memory budget, and past it checkpoints the loop; ``"revolve"`` always does;
        ``"off"`` never. A checkpointed loop stores its state at a few snapshots and, in
        the backward, runs segments again from them (binomial schedule, docs/grad_jit.md).
    snapshots
        With ``checkpoint="revolve"``: the number of snapshots of the loop's state (the
        first one included); with no ``memory_budget``, segments of one iteration.
        Default: as many as half the memory budget holds.
    memory_budget
        Bytes the history of a loop may take (default: a fraction,
        ``numba_adstack.config.MEMORY_BUDGET_FRACTION``, of the memory available when the
        backward is compiled).
    cache
        Like Numba's ``cache=True``, and the gradient too: its generated backward and
        machine code are cached on disk, so a new process does not compile them again.

    Other keyword arguments (fastmath, nogil, error_model, boundscheck...) go to Numba
    for both the function and its backward.
    """
    unknown = sorted(set(options) - {"cache"} - _numba_options())
    if unknown:
        raise TypeError(
            "grad_jit got an unknown option %s; its own options are ad_stack_size, storage, "
            "frame_budget, wrt, checkpoint, snapshots, memory_budget and cache, and Numba's are %s"
            % (", ".join(map(repr, unknown)),
               ", ".join(sorted(k for k in _numba_options() if not k.startswith("_")))))
    if storage not in ("auto", "frame", "heap"):
        raise ValueError("storage must be 'auto', 'frame' or 'heap', got %r" % (storage,))
    if checkpoint not in ("auto", "revolve", "off"):
        raise ValueError("checkpoint must be 'auto', 'revolve' or 'off', got %r"
                         % (checkpoint,))
    for name, value in (("snapshots", snapshots), ("memory_budget", memory_budget)):
        if value is not None and (isinstance(value, bool) or not isinstance(
                value, numbers.Integral) or value < 1):
            raise ValueError("%s must be a positive integer, got %r" % (name, value))
    cache = bool(options.pop("cache", False))
    ad_options = {"ad_stack_size": None if ad_stack_size is None else int(ad_stack_size),
                  "storage": storage, "frame_budget": frame_budget, "wrt": wrt,
                  "cache": cache, "checkpoint": checkpoint,
                  "snapshots": None if snapshots is None else int(snapshots),
                  "memory_budget": None if memory_budget is None else int(memory_budget)}

    def wrap(f):
        targetoptions = {}
        if hasattr(f, "py_func") and hasattr(f, "targetoptions"):
            targetoptions.update(f.targetoptions)
            f = f.py_func
        _wrt_indices(f, wrt)            # a bad entry is an error here, not at grad
        targetoptions.update(options)
        targetoptions["nopython"] = True
        disp = GradDispatcher(f, targetoptions=targetoptions, ad_options=ad_options)
        if cache:
            disk_cache.enable(disp)
        return disp
    if fn is None:
        return wrap
    return wrap(fn)
