"""``grad_jit``: a Numba dispatcher that also differentiates.

``GradDispatcher`` is a ``CPUDispatcher``: calling it, calling it from other jitted
functions, ``inspect_llvm`` and friends behave exactly as with ``numba.njit``. It adds
``grad``, ``value_and_grad`` and ``inspect_adjoint``; the backward function of each argument
type signature is generated once (from the typed Numba IR), compiled with ``numba.njit`` and
cached.
"""
import inspect
import numbers
import threading

from numba.core import config as numba_config, sigutils, typeinfer
from numba.core.compiler import Compiler
from numba.core.options import TargetOptions
from numba.core.registry import CPUDispatcher

from ...errors import AdStackOverflowError
from . import cache as disk_cache
from . import frozen
from . import grad_functions
from . import vjp as _vjp
from .backward import Backward, overflow_error
from .wrt import wrt_indices
from . import into as _into
from ..plan.checkpoint_schedule import CheckpointNeeded
from .derived import hvp as _hvp
from ..tangent.jvp import check_tangents, jvp as _jvp, jvp_for
from .signatures import BackwardTable
from ..capture.specialize import by_fingerprint


#: Numba options that apply to the primal only, not to its backward.
PRIMAL_ONLY_OPTIONS = ("nopython", "parallel", "inline", "forceinline", "no_cpython_wrapper",
                       "no_cfunc_wrapper", "_nrt")


class GradDispatcher(CPUDispatcher):
    """``numba.njit`` dispatcher with ``grad``, ``value_and_grad`` and ``inspect_adjoint``."""

    def __init__(self, py_func, locals=None, targetoptions=None, ad_options=None, **kw):
        super().__init__(py_func, locals=locals or {}, targetoptions=targetoptions or {},
                         **kw)
        self.ad_options = ad_options or {"ad_stack_size": None,
                                         "storage": "auto", "frame_budget": None,
                                         "wrt": None, "cache": False}
        # Options of the primal's entry points and inlining stay with the primal: the
        # backward is called from Python (grad) and from jitted callers alike.
        self.backward_options = {k: v for k, v in (targetoptions or {}).items()
                                 if k not in PRIMAL_ONLY_OPTIONS}
        # The primal's error model, which the functions the backward calls inherit (they
        # are then the primal's, compiled once); the backward's own code divides with
        # NumPy's unless the user gave one (numba_pipeline.AdjointCompiler): an infinite
        # derivative is inf, not a ZeroDivisionError.
        self.backward_options.setdefault("error_model", "python")
        self._signature = inspect.signature(py_func)
        self._bw_lock = threading.Lock()
        self._reset_derivatives()

    #: What the derivative methods keep on the dispatcher (jitted.py, vjp.py, tangent/,
    #: second_order.py), dropped with the rest by recompile().
    _DERIVED_CACHES = ("_jit_methods", "_jit_backwards", "_into_backwards", "_into_buffered",
                       "_into_calls", "_vjp_signatures", "_vjp_sums", "_vjp_fingerprints",
                       "_jvps", "_hvps", "_every_argument")

    def _reset_derivatives(self):
        self._backwards = {}           # by Numba argument types
        self._by_fingerprint = {}      # the same, by Numba's fast argument fingerprints
        self._frozen = {}              # by argument types: the global arrays compiled in
        self._table = BackwardTable(self)  # the same, for grad's C dispatch
        self._table_nargs = self._table.nargs
        for name in self._DERIVED_CACHES:
            self.__dict__.pop(name, None)

    def recompile(self):
        """Numba's ``recompile`` (after a global the function reads has changed): the
        derivatives are made again too, from the new values."""
        with self._bw_lock:
            self._reset_derivatives()
        super().recompile()

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
            # (not where the source is unreachable)
            disk_cache.enable(self, strict=False, primal=True)
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
                    if not self._can_compile:
                        bw = self._backward_of_declared(key)
                    else:
                        if key not in self._frozen and frozen.reads_arrays(self.py_func):
                            self.compile(key)   # global arrays frozen once, for both
                        bw = Backward(self, key)
                    self._backwards[key] = bw
        return bw

    def _backward_of_declared(self, argtypes):
        """With compilation off (signatures given, or ``disable_compile()``): the backward
        of the signature Numba's conversions choose for a call of ``argtypes``, which
        converts its arguments as the primal's does; none fits: the ``TypeError`` the
        primal's call raises, naming ``grad``."""
        sigs = self.nopython_signatures
        chosen = None
        if any(tuple(sig.args) == argtypes for sig in sigs):
            chosen = argtypes
        else:
            try:
                found = self.typingctx.resolve_overload(self.py_func, sigs, argtypes, {},
                                                        allow_ambiguous=False)
            except TypeError:
                found = None
            if found is not None:
                chosen = tuple(found.args)
        if chosen is None:
            name = self.py_func.__qualname__
            raise TypeError(
                "%s.grad: no matching definition for argument type(s) %s; %s is compiled "
                "for its signatures only (%s: given to grad_jit, or compilation disabled). "
                "Pass arguments of those types, or add their signature to the decorator"
                % (name, ", ".join(map(str, argtypes)), name,
                   ", ".join(str(s) for s in sigs)))
        bw = self._backwards.get(chosen)
        if bw is None:
            bw = self._backwards[chosen] = Backward(self, chosen)
            bw.njit_fn.disable_compile()    # other types: converted, as the primal's
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
                return self._table(*args, 1.0, False)[1]
            return self.call_backward(*self._all_args(args, kwargs), 1.0, False)[1]
        except CheckpointNeeded:
            # A loop's history is past the memory budget: Backward.run checkpoints it.
            return self.call_backward(*self._all_args(args, kwargs), 1.0, False)[1]
        except AdStackOverflowError as e:
            raise overflow_error(self, e) from None
        except MemoryError as e:
            # The history did not fit: made again checkpointed under less, or named.
            args = self._all_args(args, kwargs)
            return self._backward(args).recover(args, 1.0, False, e)[1]

    def value_and_grad(self, *args, **kwargs):
        """``(f(*args), f.grad(*args))`` from one forward replay."""
        try:
            if not kwargs and len(args) == self._table_nargs:
                return self._table(*args, 1.0, True)
            return self.call_backward(*self._all_args(args, kwargs), 1.0, True)
        except CheckpointNeeded:
            # A loop's history is past the memory budget: Backward.run checkpoints it.
            return self.call_backward(*self._all_args(args, kwargs), 1.0, True)
        except AdStackOverflowError as e:
            raise overflow_error(self, e) from None
        except MemoryError as e:
            # The history did not fit: made again checkpointed under less, or named.
            args = self._all_args(args, kwargs)
            return self._backward(args).recover(args, 1.0, True, e)

    def grad_into(self, out, /, *args, **kwargs):
        """Add the gradient into ``out`` and return ``f(*args)``: ``out`` is one array per
        differentiated float array argument, of its shape and dtype (the array itself for
        one, a tuple in argument order for several), into which the gradient is added,
        as PyTorch's ``.grad`` accumulates. Nothing is allocated for it: the form for
        loops that call a gradient many times (from jitted code too)."""
        return _into.grad_into(self, out, self._all_args(args, kwargs))

    def call_backward(self, *args):
        """``(value, gradients)`` for the arguments, the seed and whether the value is
        wanted (last), through the interpreter: the calls the backward table does not
        hold. (Where it is not wanted, the value returned may be any number.)"""
        *args, seed, value = args
        args = self._all_args(tuple(args), {})
        return self._backward(args).run(args, seed, value)

    def inspect_adjoint(self, *args, **kwargs):
        """Source of the backward function generated for these arguments (after a note of
        the loops it checkpoints, if any)."""
        bw = self._backward(self._all_args(args, kwargs))
        return bw.checkpoint_note + bw.source

    # -- vector-Jacobian products (numba_adstack.ad.dispatch.vjp)
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
    # (numba_adstack/ad/tangent/: the forward-mode rewrite, hvp and jacobian)
    def jvp(self, args, tangents):
        """``(f(*args), tangent)``: the derivative of ``f`` at ``args`` along ``tangents``
        (one per argument: a float for a float, an array of the same shape and dtype for a
        float array, None for arguments not differentiated). The tangent mirrors the
        value: a float, an array or a tuple."""
        return _jvp(self, self._all_args(tuple(args), {}), tangents)

    def hvp(self, args, v):
        """The Hessian of the (float scalar) result at ``args`` times ``v`` (one tangent
        per argument, as for ``jvp``), shaped as ``f.grad(*args)``."""
        return _hvp(self, self._all_args(tuple(args), {}), v)

    def inspect_jvp(self, args, tangents):
        """Source of the JVP function generated for these arguments and tangents."""
        args = self._all_args(tuple(args), {})
        _, wrt, layout = check_tangents(self, args, tangents)
        return jvp_for(self, args, wrt, layout).source



def _numba_options():
    """The options ``numba.njit`` passes to its CPU target (fastmath, nogil, ...)."""
    opts = CPUDispatcher.targetdescr.options
    return {k for k in dir(opts) if isinstance(getattr(opts, k), TargetOptions.Mapping)}



def grad_jit(fn=None, *, ad_stack_size=None, storage="auto", frame_budget=None, wrt=None,
             checkpoint="auto", snapshots=None, memory_budget=None, ieee_products=False,
             locals=None, pipeline_class=None, **options):
    """Decorator like ``numba.njit`` that also gives ``f.grad`` and ``f.value_and_grad``.

    Spelled as ``numba.njit`` is: ``@grad_jit``, ``@grad_jit(...)``, and with signatures
    (``grad_jit("f8(f8[:])")``, a list of them, or a ``Signature``), which compile the
    function eagerly for them as ``njit`` does. ``locals=`` types the locals of the
    function and of its gradient's capture; ``pipeline_class=`` compiles the function (its
    gradient is captured by this package's pipeline). Under ``NUMBA_DISABLE_JIT=1`` the
    function runs as Python, as ``njit``'s does, and ``grad`` says it needs the JIT.

    The function returned runs as ``numba.njit``'s does, and has:

    * ``f.grad(*args)``: the gradient of its float result, one entry per argument (an
      array for a float array, a float for a float scalar, None otherwise);
    * ``f.value_and_grad(*args)``: ``(f(*args), f.grad(*args))`` in one backward run;
    * ``f.grad_into(out, *args)``: ``f(*args)``, the gradient added into the arrays ``out``
      (one per differentiated float array argument), nothing allocated;
    * ``f.vjp(*args)`` / ``f.vjp_call(*args, cotangent)``: the value and the pullback of a
      function returning an array or a tuple;
    * ``f.jvp(args, tangents)``: the value and the directional derivative (forward mode);
    * ``f.hvp(args, v)``: the Hessian of the result times ``v``, shaped as the gradient;
    * ``f.inspect_adjoint(*args)``: the source of the generated backward function.

    ``numba_adstack.hessian``, ``jacobian``, ``stop_gradient``, ``checkpoint``,
    ``custom_vjp`` and ``implicit_root`` build on it (docs/grad_jit.md).

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
    ieee_products
        By default (False) a zero adjoint contributes zero: where the adjoint reaching an
        operation is exactly 0, its contribution is exactly 0 even where its local
        derivative is infinite or NaN (``sqrt`` of 0 whose value nothing uses, the
        masked branch of ``np.where``, NaN data that ``np.nansum`` skips), so that such
        gradients are finite where JAX and PyTorch give NaN. True: the IEEE product,
        ``0 * inf = NaN``, as they give (docs/errors.md).
    cache
        Like Numba's ``cache=True``, and the gradient too: its generated backward and
        machine code are cached on disk, so a new process does not compile them again.

    Other keyword arguments (fastmath, nogil, error_model, boundscheck...) go to Numba
    for both the function and its backward.
    """
    sigs = None
    if isinstance(fn, list) or sigutils.is_signature(fn):
        sigs, fn = (fn if isinstance(fn, list) else [fn]), None
        bad = [s for s in sigs if not sigutils.is_signature(s)]
        if bad:
            raise TypeError("grad_jit got a list with %r, which is not a signature; write "
                            "signatures as numba.njit takes them: 'f8(f8[:])', "
                            "numba.float64(numba.float64[:]) or a tuple of argument types"
                            % (bad[0],))
    unknown = sorted(set(options) - {"cache"} - _numba_options())
    if unknown:
        raise TypeError(
            "grad_jit got an unknown option %s; its own options are ad_stack_size, storage, "
            "frame_budget, wrt, checkpoint, snapshots, memory_budget, ieee_products and "
            "cache, and Numba's are %s"
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
                  "memory_budget": None if memory_budget is None else int(memory_budget),
                  "ieee_products": bool(ieee_products)}

    def wrap(f):
        # As numba.jit sets it: None, Numba's configured default.
        targetoptions = {"boundscheck": None}
        own_locals, own_pipeline = {}, pipeline_class
        if hasattr(f, "py_func") and hasattr(f, "targetoptions"):
            # grad_jit of an njit function (njit refuses one): its options are kept.
            targetoptions.update(f.targetoptions)
            own_locals.update(getattr(f, "locals", None) or {})
            theirs = getattr(getattr(f, "_compiler", None), "pipeline_class", None)
            if own_pipeline is None and theirs not in (None, Compiler):
                own_pipeline = theirs
            f = f.py_func
        wrt_indices(f, wrt)            # a bad entry is an error here, not at grad
        if numba_config.DISABLE_JIT:
            return _python_function(f)
        targetoptions.update(options)
        targetoptions["nopython"] = True
        own_locals.update(locals or {})
        extra = {} if own_pipeline is None else {"pipeline_class": own_pipeline}
        disp = GradDispatcher(f, locals=own_locals, targetoptions=targetoptions,
                              ad_options=ad_options, **extra)
        if cache:
            disk_cache.enable(disp, primal=True)
        if sigs is not None:            # compiled now, and only for these, as njit does
            with typeinfer.register_dispatcher(disp):
                for sig in sigs:
                    disp.compile(sig)
                disp.disable_compile()
        return disp
    if fn is None:
        return wrap
    return wrap(fn)


grad_functions.register(GradDispatcher, grad_jit)


def _python_function(f):
    """Under ``NUMBA_DISABLE_JIT=1``: ``f`` itself, as ``numba.njit`` returns it, with the
    gradient methods saying why they cannot run."""
    def needs_jit(method):
        def disabled(*args, **kwargs):
            raise RuntimeError(
                "%s.%s: NUMBA_DISABLE_JIT=1 runs %s as plain Python, and its derivatives "
                "are made from the compiled function; unset NUMBA_DISABLE_JIT (or set it "
                "to 0) to take them" % (f.__qualname__, method, f.__qualname__))
        disabled.__name__ = method
        return disabled
    for name in ("grad", "value_and_grad", "vjp", "vjp_call", "jvp", "hvp",
                 "inspect_adjoint"):
        setattr(f, name, needs_jit(name))
    f.py_func = f
    return f
