"""What a cached backward depends on: its key, and how its globals are found again.

A backward is generated from the typed IR of a function with every Numba callee inlined,
so its key covers the source of the function and of every function it reaches (through
globals, module attributes and closure cells, recursively), the values of the globals and
closure cells they read (arrays by content), the argument types, the options, and the
versions of Python, NumPy, Numba, llvmlite and numba_adstack (with a digest of its own
sources). ``Dependencies`` walks a function once; the same walk in another process finds
the same reads in the same order, which is how the generated code's globals are found
again there (``locate`` / ``resolve``).
"""
import dis
import enum
import functools
import hashlib
import importlib
import inspect
import os
import sys
import types as pytypes

import llvmlite
import numba
import numpy as np
from numba.core import types
from numba.core.typing import templates

from ..._version import __version__
from ..capture.library_calls import cython_special_name, pointer_address

#: Changes whenever the layout of cache entries or of the key changes.
FORMAT = 2

_ATTR_OPS = ("LOAD_ATTR", "LOAD_METHOD")


class Uncacheable(Exception):
    """A value the key cannot describe, or a global that cannot be found again."""


def _is_dispatcher(value):
    return hasattr(value, "py_func") and hasattr(value, "targetoptions")


def _code_objects(code):
    stack = [code]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(k for k in c.co_consts if isinstance(k, pytypes.CodeType))


def _global_reads(code):
    """Dotted global names the code reads: ``("np", "sin")`` for ``np.sin``; attribute
    chains are followed as far as they are written, resolved later while they name
    modules."""
    out = []
    for c in _code_objects(code):
        chain = None
        for ins in dis.get_instructions(c):
            if ins.opname == "LOAD_GLOBAL":
                chain = [ins.argval]
                out.append(chain)
            elif ins.opname in _ATTR_OPS and chain is not None:
                chain.append(ins.argval)
            else:
                chain = None
    return out


def _named(value):
    """``(module, qualname)`` when importing them gives back ``value`` itself, else None."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    try:
        if _import_path(module, qualname) is value:
            return module, qualname
    except Exception:
        pass
    return None


def _import_path(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


class Dependencies:
    """The functions ``py_func`` reaches and the values they read, in a fixed order.

    ``parts`` describes them for the key; ``reads`` maps ``(function index, kind, name)``
    to the value read (kind ``"global"`` with a dotted name, or ``"cell"``).
    """

    def __init__(self, py_func):
        self.functions = []
        self._index = {}
        self.parts = []
        self.reads = {}
        self._function(py_func)
        i = 0
        while i < len(self.functions):     # breadth first: a fixed order for a fixed program
            self._walk(i)
            i += 1

    def _function(self, fn):
        """Index of ``fn`` in the walk, adding it when new."""
        key = id(fn)
        if key not in self._index:
            self._index[key] = len(self.functions)
            self.functions.append(fn)
        return self._index[key]

    def _walk(self, i):
        fn = self.functions[i]
        # Not its module's name: a file run as a script and imported is one function.
        self.parts.append(("function", i, fn.__qualname__, _source(fn)))
        globs = fn.__globals__
        for chain in _global_reads(fn.__code__):
            if chain[0] not in globs:
                continue                   # a builtin
            value, n = globs[chain[0]], 1
            while isinstance(value, pytypes.ModuleType) and n < len(chain) \
                    and hasattr(value, chain[n]):
                value, n = getattr(value, chain[n]), n + 1
            name = ".".join(chain[:n])
            self._read(i, "global", name, value)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:
                continue                   # an empty cell: nothing to read
            self._read(i, "cell", name, value)

    def _read(self, i, kind, name, value):
        if (i, kind, name) in self.reads:
            return
        self.reads[(i, kind, name)] = value
        try:
            fp = self.fingerprint(value, self.functions[i])
        except Uncacheable as e:
            raise Uncacheable("%s reads %s %r: %s" % (self.functions[i].__qualname__,
                                                       kind, name, e)) from None
        self.parts.append((kind, i, name, fp))

    def fingerprint(self, value, reader):
        """A description of ``value`` that changes when what it means to the compiled code
        changes; functions the code can call are walked instead."""
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            return (type(value).__name__, repr(value))
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                raise Uncacheable("an object array")
            data = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
            return ("ndarray", str(value.dtype.descr), value.shape, data)
        if isinstance(value, np.generic):
            return ("numpy scalar", str(value.dtype.descr), repr(value.item()))
        if isinstance(value, np.dtype):
            return ("dtype", str(value.descr))
        if isinstance(value, tuple):       # named tuples too
            return (type(value).__qualname__,) + tuple(self.fingerprint(v, reader)
                                                       for v in value)
        if isinstance(value, pytypes.ModuleType):
            return ("module", value.__name__)
        if isinstance(value, types.Type):
            return ("numba type", str(value))
        if isinstance(value, enum.Enum):
            return ("enum", type(value).__module__, type(value).__qualname__, value.name,
                    self.fingerprint(value.value, reader))
        if _is_dispatcher(value):
            # (with the rules a user gave it, numba_adstack.custom_vjp: walked too)
            rules = getattr(value, "ad_rules", {})
            return ("jitted", self._function(value.py_func),
                    stable_repr(value.targetoptions)) + tuple(
                        (kind, self._function(rules[kind].py_func)) for kind in sorted(rules))
        overloads = _overload_functions(value)
        if overloads:
            # A library's @overload stub: the grad follows the implementation Numba
            # chooses, so the functions that make the implementations count.
            return ("overloaded", _named(value)) + tuple(
                ("function", self._function(f)) for f in overloads)
        if isinstance(value, pytypes.FunctionType) and (
                value.__module__ == reader.__module__ or _named(value) is None):
            # A plain function of the same module (an overload or register_jitable
            # target, typically), or one that cannot be named: its source counts.
            return ("function", self._function(value))
        address = pointer_address(value)
        special = None if address is None else cython_special_name(address)
        if special is not None:         # (its address changes from process to process)
            return ("scipy.special.cython_special", special)
        named = _named(value)
        if named is not None:
            return ("named",) + named
        raise Uncacheable("a %s, which the cache key cannot describe" % type(value).__name__)


def _overload_functions(value):
    """The functions of the ``@overload`` templates registered for ``value`` (they return
    its implementations), in registration order; empty for anything else."""
    if not callable(value) or _is_dispatcher(value):
        return []
    try:
        hash(value)
    except TypeError:
        return []
    out = []
    for func, fnty in templates.builtin_registry.globals:
        if func is value and isinstance(fnty, types.Function):
            out.extend(t._overload_func for t in fnty.templates
                       if isinstance(getattr(t, "_overload_func", None),
                                     pytypes.FunctionType))
    return out


def _source(fn):
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        text = None                    # generated code: its code object stands for it
    h = hashlib.sha256()
    _code_digest(fn.__code__, h)
    return (text, h.hexdigest())


def _code_digest(code, h):
    h.update(code.co_code)
    h.update(stable_repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            _code_digest(const, h)     # its repr holds an address
        else:
            h.update(stable_repr(const).encode())


def stable_repr(value):
    """``repr``, the same in every process: sets (whose order follows string hashing)
    sorted."""
    if isinstance(value, (set, frozenset)):
        return "{%s}" % ", ".join(sorted(stable_repr(v) for v in value))
    if isinstance(value, (tuple, list)):
        return "%s(%s)" % (type(value).__name__, ", ".join(stable_repr(v) for v in value))
    if isinstance(value, dict):
        return "{%s}" % ", ".join(sorted("%s: %s" % (stable_repr(k), stable_repr(v))
                                         for k, v in value.items()))
    return repr(value)


@functools.lru_cache(maxsize=None)
def package_digest():
    """Digest of numba_adstack's own sources, as this process imported them: a changed
    rewrite never reads old entries. ``__pycache__`` is left out: Numba's caches of
    functions defined in the package are written there (generated backwards are ``.py``
    files), and a cache written by one process must not change the key of another."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def versions():
    return (FORMAT, sys.version, np.__version__, numba.__version__, llvmlite.__version__,
            __version__, package_digest())


def digest(payload):
    return hashlib.sha256(repr(payload).encode()).hexdigest()


def locate(value, deps):
    """How the code generated in another process finds ``value`` again: a JSON-able list,
    or None. Values the walk read are found where it read them (the key holds their
    content); modules and library objects are imported by name."""
    if isinstance(value, pytypes.ModuleType):
        return ["module", value.__name__]
    for (i, kind, name), read in deps.reads.items():
        if read is value:
            return ["read", i, kind, name]
    named = _named(value)
    if named is not None:
        return ["named", named[0], named[1]]
    owner = getattr(value, "ad_rule_of", None)    # a checked call of a user's rule
    if owner is not None:
        loc = locate(owner[0], deps)
        if loc is not None:
            return ["rule", loc, owner[1]]
    return None


def resolve(loc, deps):
    """The value ``locate`` described, in this process (raises Uncacheable if gone)."""
    try:
        if loc[0] == "module":
            return importlib.import_module(loc[1])
        if loc[0] == "read":
            return deps.reads[(loc[1], loc[2], loc[3])]
        if loc[0] == "named":
            return _import_path(loc[1], loc[2])
        if loc[0] == "rule":
            return resolve(loc[1], deps).ad_rule_helpers[loc[2]]
    except (ImportError, AttributeError, KeyError, IndexError, TypeError) as e:
        raise Uncacheable("cannot find %r again: %s" % (loc, e)) from None
    raise Uncacheable("unknown locator %r" % (loc,))
