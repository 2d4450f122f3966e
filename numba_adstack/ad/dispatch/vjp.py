"""``f.vjp`` and ``f.vjp_call``: vector-Jacobian products of functions returning floats,
arrays or (nested) tuples of them.

The pullback of ``f`` at ``x`` for the cotangent ``c`` is the gradient of the float
``<c, f(x)>`` (the sum over the output's float leaves of ``c_leaf * f(x)_leaf``). For each
output structure a small function is generated that calls ``f`` and returns that sum, with
the cotangent leaves as extra arguments; ``grad_jit`` differentiates it with respect to
``f``'s own arguments (``f`` is inlined as any Numba callee is). Its backward is compiled
once per argument types: the cotangents are arguments, so a new cotangent recompiles
nothing. Its reverse sweep starts by adding each cotangent into the adjoint of the output
it belongs to, which is what seeding the output adjoints with the cotangents would do.

Integer (and boolean) outputs take no cotangent: None, or a zero, stands for theirs.
"""
import threading

import numpy as np
from numba.core import types

from ...errors import AdjointArgumentError, NonDifferentiableError
from . import grad_functions
from .wrt import wrt_indices
from ..generated_source import exec_source
from ..capture.specialize import by_fingerprint
from ..generated_source import identifier
from ..typeinfo import is_float, is_float_array

_FLOAT, _ARRAY, _NONE, _TUPLE = "float", "array", "none", "tuple"
_SHAPE_MISMATCH = "numba_adstack: cotangent shape mismatch"
_lock = threading.Lock()


# ---------------------------------------------------------------------- the output tree
def output_tree(t, qualname, path=()):
    """How the cotangent of an output of Numba type ``t`` is laid out: ``(_FLOAT, t)``,
    ``(_ARRAY, t)``, ``(_NONE, t)`` for integers and booleans (no cotangent) or
    ``(_TUPLE, [trees])``."""
    if is_float(t):
        return (_FLOAT, t)
    if is_float_array(t):
        return (_ARRAY, t)
    if isinstance(t, (types.Integer, types.Boolean)) or (
            isinstance(t, types.Array) and isinstance(t.dtype, (types.Integer, types.Boolean))):
        return (_NONE, t)
    if isinstance(t, types.BaseTuple) and not isinstance(t, (types.NamedTuple,
                                                             types.NamedUniTuple)):
        return (_TUPLE, [output_tree(u, qualname, path + (k,)) for k, u in enumerate(t)])
    raise NonDifferentiableError(
        "cannot take the vjp of %r: %s has type %s; outputs must be floats, float arrays, "
        "integers or tuples of them" % (qualname, _output_name(path, qualname), t),
        highlighting=False)


def _leaves(tree, path=()):
    """``[(path, kind, type)]`` of the leaves that take a cotangent, in order."""
    kind = tree[0]
    if kind == _TUPLE:
        return [leaf for k, sub in enumerate(tree[1]) for leaf in _leaves(sub, path + (k,))]
    if kind == _NONE:
        return []
    return [(path, kind, tree[1])]


def _output_name(path, qualname):
    if not path:
        return "the output of %s" % qualname
    if len(path) == 1:
        return "output %d of %s" % (path[0], qualname)
    return "output %s of %s" % ("".join("[%d]" % k for k in path), qualname)


# ---------------------------------------------------------------------- the generated sum
def _sum_source(fname, params, leaves):
    """Source of ``fname(*params, *cotangents)``: ``<cotangents, f(*params)>``; a
    cotangent whose shape is not its output's raises."""
    cts = ["_vjp_ct%d" % k for k in range(len(leaves))]
    lines = ["def %s(%s):" % (fname, ", ".join(list(params) + cts)),
             "    _vjp_out = _vjp_primal(%s)" % ", ".join(params),
             "    _vjp_sum = 0.0"]
    for k, (path, kind, t) in enumerate(leaves):
        leaf = "_vjp_out" + "".join("[%d]" % i for i in path)
        if kind == _FLOAT:
            lines.append("    _vjp_sum += %s * %s" % (leaf, cts[k]))
            continue
        out = "_vjp_o%d" % k
        lines.append("    %s = %s" % (out, leaf))
        lines.append("    if %s.shape != %s.shape:" % (cts[k], out))
        lines.append("        raise ValueError(%r)" % _SHAPE_MISMATCH)
        idx = ["_vjp_i%d_%d" % (k, d) for d in range(t.ndim)]
        for d, i in enumerate(idx):
            lines.append("    " * (d + 1) + "for %s in range(%s.shape[%d]):" % (i, out, d))
        at = "[%s]" % ", ".join(idx) if idx else "[()]"
        lines.append("    " * (t.ndim + 1) + "_vjp_sum += %s%s * %s%s" % (out, at, cts[k], at))
    lines.append("    return _vjp_sum")
    return "\n".join(lines) + "\n"


def _sum_function(disp, nargs, leaves):
    """The ``grad_jit`` function of ``<cotangents, f(*args)>`` for this output structure,
    differentiated with respect to ``f``'s arguments only."""
    code = disp.py_func.__code__
    if nargs == code.co_argcount:
        params = list(code.co_varnames[:nargs])
    else:
        params = ["_vjp_a%d" % k for k in range(nargs)]
    fname = identifier(disp.py_func.__name__)
    source = _sum_source(fname, params, leaves)
    py = exec_source(fname, source, {"_vjp_primal": disp}, disp.py_func.__qualname__ + " vjp")
    py.__qualname__ = disp.py_func.__qualname__
    arg_wrt = wrt_indices(disp.py_func, disp.ad_options["wrt"])
    ad_options = dict(disp.ad_options, cache=False,
                      wrt=frozenset(range(nargs)) if arg_wrt is None else arg_wrt)
    return grad_functions.like(disp, py, ad_options)


# ---------------------------------------------------------------------- one signature
class VjpSignature:
    """The vjp of ``f`` for one argument type signature: the output's layout and the
    compiled backward of ``<cotangents, f(*args)>``."""

    def __init__(self, disp, argtypes):
        self.qualname = disp.py_func.__qualname__
        self.nargs = len(argtypes)
        disp.compile(argtypes)
        self.out_type = disp.overloads[tuple(argtypes)].signature.return_type
        self.tree = output_tree(self.out_type, self.qualname)
        self.leaves = _leaves(self.tree)
        key = (self.nargs, tuple((p, k, t) for p, k, t in self.leaves))
        sums = disp.__dict__.setdefault("_vjp_sums", {})
        with _lock:
            if key not in sums:
                sums[key] = _sum_function(disp, self.nargs, self.leaves)
        self.sum_function = sums[key]
        ct_types = [t if kind == _FLOAT else t.copy(layout="C")
                    for path, kind, t in self.leaves]
        # The dtype and dimension each array cotangent must have, by the output's type.
        self.expected = {id(t): (np.dtype(str(t.dtype)), t.ndim)
                         for path, kind, t in self.leaves if kind == _ARRAY}
        self.backward = self.sum_function.backward_for_types(tuple(argtypes) + tuple(ct_types))

    def cotangent_leaves(self, cotangent, value=None):
        """The cotangent's leaves as the backward takes them, checked against the output's
        layout (and against ``value``'s shapes when it is known)."""
        flat = []
        self._walk(self.tree, cotangent, (), flat, value)
        return flat

    def _walk(self, tree, c, path, flat, value):
        kind, t = tree
        if kind == _TUPLE:
            if not isinstance(c, (tuple, list)) or len(c) != len(t):
                raise AdjointArgumentError(
                    "cotangent for %s must be a tuple of %d items, like the output; got %s"
                    % (self._name(path), len(t), _describe(c)))
            for k, sub in enumerate(t):
                self._walk(sub, c[k], path + (k,), flat,
                           None if value is None else value[k])
        elif kind == _NONE:
            if c is not None and np.any(np.asarray(c) != 0):
                raise AdjointArgumentError(
                    "%s is %s and takes no cotangent; pass None (or zero) for it, not %s"
                    % (self._name(path), t, _describe(c)))
        elif kind == _FLOAT:
            if isinstance(c, np.ndarray) and c.ndim == 0:
                c = c[()]
            if not isinstance(c, (float, int, np.floating, np.integer)) or \
                    isinstance(c, bool):
                raise AdjointArgumentError("cotangent for %s must be a float (the output is "
                                           "%s), got %s" % (self._name(path), t,
                                                            _describe(c)))
            flat.append(float(c))
        else:
            flat.append(self._array_leaf(c, t, path, value))

    def cast_cotangent(self, cotangent, tree=None):
        """``cotangent`` with each float array leaf converted to its output's dtype: for
        callers whose cotangents come in another precision (JAX's float32 without
        ``jax_enable_x64``). Other leaves, and a structure that is not the output's, are
        left for :meth:`cotangent_leaves` to check."""
        kind, t = self.tree if tree is None else tree
        if kind == _TUPLE and isinstance(cotangent, (tuple, list)) and \
                len(cotangent) == len(t):
            return tuple(self.cast_cotangent(c, sub) for c, sub in zip(cotangent, t))
        if kind == _ARRAY and isinstance(cotangent, np.ndarray) and \
                cotangent.dtype.kind == "f":
            return cotangent.astype(self.expected[id(t)][0], copy=False)
        return cotangent

    def _name(self, path):
        return _output_name(path, self.qualname)

    def _array_leaf(self, c, t, path, value):
        if not isinstance(c, np.ndarray):
            raise AdjointArgumentError("cotangent for %s must be a NumPy array (the output "
                                       "is %s), got %s" % (self._name(path), t, _describe(c)))
        dtype, ndim = self.expected[id(t)]
        if c.dtype != dtype:
            raise AdjointArgumentError("cotangent for %s has dtype %s, expected %s"
                                       % (self._name(path), c.dtype, dtype))
        if c.ndim != ndim or (value is not None and c.shape != value.shape):
            want = value.shape if value is not None else "a %d-d array" % t.ndim
            raise AdjointArgumentError("cotangent for %s has shape %s, expected %s"
                                       % (self._name(path), c.shape, want))
        return c if c.flags.c_contiguous else np.ascontiguousarray(c)

    def pull(self, disp, args, cotangent, value=None):
        """The input cotangents for ``cotangent``: the backward's gradients of ``f``'s
        arguments."""
        flat = self.cotangent_leaves(cotangent, value)
        try:
            grads = self.backward(tuple(args) + tuple(flat), 1.0, False)[1]
        except ValueError as e:
            if str(e) != _SHAPE_MISMATCH:
                raise
            mismatch = e
        else:
            return grads[:self.nargs]
        # Only now is the output needed: its shapes name the culprit.
        self.cotangent_leaves(cotangent, disp(*args))
        raise mismatch


def _copied(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (tuple, list)):
        return type(v)(_copied(x) for x in v)
    return v


def _describe(c):
    if isinstance(c, np.ndarray):
        return "an array of shape %s and dtype %s" % (c.shape, c.dtype)
    return "%s %r" % (type(c).__name__, c) if isinstance(c, (int, float)) else \
        type(c).__name__


# ---------------------------------------------------------------------- the methods
def signature_for(disp, args):
    """The :class:`VjpSignature` of ``disp`` for ``args``, made once per argument types."""
    by_types = disp.__dict__.setdefault("_vjp_signatures", {})

    def build(argtypes):
        if argtypes not in by_types:
            by_types[argtypes] = VjpSignature(disp, argtypes)
        return by_types[argtypes]
    return by_fingerprint(disp.__dict__.setdefault("_vjp_fingerprints", {}), args, build)


def protected_arguments(disp, args):
    """``args``, with copies of the arrays when ``disp`` writes into its arguments (for
    running the primal without changing the caller's arrays)."""
    return _copied(args) if signature_for(disp, args).backward.written_args else args


def vjp(disp, args):
    """``(f(*args), pullback)``; ``pullback(cotangent)`` gives the input cotangents."""
    sig = signature_for(disp, args)
    # A function that writes into its arguments runs on copies, as grad's backward does:
    # the caller's arrays stay as they are, and the pullback is at the inputs as given.
    value = disp(*(_copied(args) if sig.backward.written_args else args))

    def pullback(cotangent):
        return sig.pull(disp, args, cotangent, value)
    return value, pullback


def vjp_call(disp, args, cotangent):
    """The input cotangents of ``f`` at ``args`` for ``cotangent``, in one backward call."""
    return signature_for(disp, args).pull(disp, args, cotangent)
