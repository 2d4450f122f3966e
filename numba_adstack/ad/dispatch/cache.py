"""``cache=True`` for gradients: generated backwards and their machine code on disk.

The entry of one function, argument types and options lives in ``numba_adstack/`` under
the directory where Numba caches the function itself (``NUMBA_CACHE_DIR``, else
``__pycache__`` next to the source, else the user-wide cache: whichever Numba picked):

- ``<name>.json``: the key, the source of the backward, what the gradient call needs to
  know about it (which arguments it writes, which are float arrays, ...) and where each
  global of the generated code is found again;
- ``<name>.py``: the backward (and its helpers) as a real module, so that Numba
  caches their machine code next to it, like any ``njit(cache=True)`` function.

A later process with the same key reads the JSON, imports the module and loads the
machine code: neither the rewrite nor LLVM runs. A stale entry (the key changed) is
replaced; an unreadable one is ignored with an ``AdStackCacheWarning`` and compiled again;
a directory that cannot be written leaves the gradient uncached.
"""
import hashlib
import json
import os
import pickle
import re
import sys
import threading
import uuid
import warnings

from numba import njit
from numba.core import types
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile

from ... import config
from ...errors import AdStackCacheWarning
from . import cache_key
from .cache_key import Dependencies, Uncacheable
from ..generated_source import exec_file_source

#: A Python name in generated source.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_import_lock = threading.Lock()
_warned = set()


def warn(message):
    warnings.warn("numba_adstack: " + message, AdStackCacheWarning, stacklevel=3)


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warn(message)


# ---------------------------------------------------------------- Numba's cache, checked
class CorruptEntry(Exception):
    pass


class _CheckedCacheFile(IndexDataCacheFile):
    """Numba's index and data files; each data file starts with a digest of its key and
    content, so a damaged file is detected instead of loaded as machine code."""

    #: ``replaces(new_key, old_key)``: a new entry takes over the file of an old one.
    replaces = None

    def save(self, key, data):
        overloads = self._load_index()
        name = overloads.get(key)
        stale = [k for k in overloads if self.replaces is not None and k != key
                 and self.replaces(key, k)] if name is None else []
        if stale:
            name = overloads[key] = overloads.pop(stale[0])
            for k in stale[1:]:
                del overloads[k]
            self._save_index(overloads)
        if name is None:
            taken = set(overloads.values())
            number = 1
            while self._data_name(number) in taken:
                number += 1
            name = overloads[key] = self._data_name(number)
            self._save_index(overloads)
        payload = self._dump(data)
        with self._open_for_write(self._data_path(name)) as f:
            f.write(_checksum(key, payload) + payload)

    def load(self, key):
        name = self._load_index().get(key)
        if name is None:
            return None
        try:
            with open(self._data_path(name), "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return None
        if raw[:32] != _checksum(key, raw[32:]):
            raise CorruptEntry("%s does not match its checksum" % self._data_path(name))
        return pickle.loads(raw[32:])


def _checksum(key, payload):
    return hashlib.sha256(repr(key).encode() + payload).digest()


class _CacheImpl(CompileResultCacheImpl):
    def get_filename_base(self, fullname, abiflags):
        # Not the files of a plain njit function of the same name: their format differs.
        return super().get_filename_base(fullname, abiflags) + ".nad"


class CheckedFunctionCache(FunctionCache):
    """Numba's function cache, except that an unreadable entry is compiled again (with a
    warning) instead of failing the call, and a failed write leaves it uncached."""
    _impl_class = _CacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        plain = self._cache_file
        self._cache_file = _CheckedCacheFile(plain._cache_path, self._impl.filename_base,
                                             plain._source_stamp)

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as e:
            warn("ignoring the unreadable cache entry of %r in %s (%s: %s); compiling it "
                 "again" % (self._py_func.__qualname__, self._cache_path,
                            type(e).__name__, e))
            try:
                self.flush()           # a damaged index would fail every later save
            except OSError:
                pass
            return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except Exception as e:
            warn("cannot cache %r in %s (%s: %s); it is compiled again in each process"
                 % (self._py_func.__qualname__, self._cache_path, type(e).__name__, e))


class PrimalFunctionCache(CheckedFunctionCache):
    """The cache of a ``grad_jit`` function's primal: its entries are keyed, besides
    Numba's key (the function's own code), by what the gradient's key covers (the
    source of every function it reaches, the globals they read: ``Dependencies``).
    Numba's own key misses an edited helper in another file, and the primal would then
    be the old function beside a gradient of the new one. Where the walk cannot describe
    a dependency (the gradient is then compiled in each process), so is the primal."""

    def __init__(self, py_func):
        super().__init__(py_func)
        # An entry of the same signature and code, of other dependencies: replaced.
        self._cache_file.replaces = lambda new, old: new[:-1] == old[:-1]

    def _dependencies(self):
        if not hasattr(self, "_deps_digest"):
            try:
                self._deps_digest = cache_key.digest(Dependencies(self._py_func).parts)
            except Uncacheable:
                self._deps_digest = None
        return self._deps_digest

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (self._dependencies(),)

    def load_overload(self, sig, target_context):
        if self._dependencies() is None:
            return None
        return super().load_overload(sig, target_context)

    def save_overload(self, sig, data):
        if self._dependencies() is not None:
            super().save_overload(sig, data)


def enable(disp, strict=True, primal=False):
    """``cache=True`` for the dispatcher ``disp`` (checked entries; ``primal``: a
    ``grad_jit`` function's own, keyed by its dependencies too). Where Numba finds no
    writable cache directory it raises, as ``njit(cache=True)`` does, unless ``strict`` is
    False (a dispatcher rebuilt in a worker process), which leaves it uncached."""
    try:
        disp._cache = (PrimalFunctionCache if primal else CheckedFunctionCache)(disp.py_func)
    except (RuntimeError, OSError, TypeError):
        if strict:
            raise


def is_enabled(disp):
    return isinstance(disp._cache, CheckedFunctionCache)


def jit(fn, options, cache):
    """``numba.njit(**options)(fn)``, cached on disk when ``cache``."""
    disp = njit(**options)(fn)
    if cache:
        enable(disp, strict=False)
    return disp


# ---------------------------------------------------------------- generated backwards
class Generated:
    """A generated backward: from the rewrite, or read back from a cache entry."""
    FIELDS = ("fname", "source", "helpers", "inlined", "written_args", "float_array_args",
              "float_scalar_args", "integer_float_args")

    def __init__(self, fname, source, helpers, inlined, written_args, float_array_args,
                 float_scalar_args, integer_float_args, globals, checkpoint_note=""):
        self.fname = fname
        self.source = source
        self.helpers = list(helpers)
        self.inlined = sorted(inlined)  # helpers inlined into prange bodies
        self.written_args = list(written_args)
        self.float_array_args = list(float_array_args)
        self.float_scalar_args = list(float_scalar_args)
        # [index, name] of the integer arguments in float arithmetic (IntegerArgumentWarning)
        self.integer_float_args = [list(a) for a in integer_float_args]
        self.globals = globals          # name -> object the generated code reads
        # inspect_adjoint's lines on the checkpointed loops (plan/checkpoint.py)
        self.checkpoint_note = checkpoint_note


# The key is part of the text: Numba's cache of the module's machine code, which freezes
# the values of globals such as arrays, is valid for this text only.
_MODULE_HEADER = '''"""The backward of {qualname} ({where}) for argument types
({argtypes}), generated by numba_adstack.

Its globals are set by numba_adstack.ad.dispatch.cache when it is loaded; it is replaced when the
function, a function it calls or a global they read changes.

key: {key}
"""
'''


class Entry:
    """The cache entry of one function, argument types and options."""

    def __init__(self, dispatcher, argtypes, deps, options):
        py_func = dispatcher.py_func
        self.qualname = py_func.__qualname__
        self.types = tuple(_type_key(t) for t in argtypes)
        self.deps = deps
        # What the key digests, kept for a message on why an entry was stale.
        self.key_parts = (cache_key.versions(), deps.parts, self.types, options)
        self.key = cache_key.digest(self.key_parts)
        # One slot per function, signature and options: a changed source replaces its
        # entry instead of adding one.
        cells = [p for p in deps.parts if p[0] == "cell" and p[1] == 0]
        where = "%s:%d" % (py_func.__code__.co_filename, py_func.__code__.co_firstlineno)
        slot = cache_key.digest((where, self.qualname, self.types, options, cells))
        stem = os.path.splitext(os.path.basename(py_func.__code__.co_filename))[0]
        name = "%s.%s-%s" % (_file_safe(stem), _file_safe(self.qualname), slot[:16])
        self.where = where
        self.folder = os.path.join(dispatcher._cache.cache_path, "numba_adstack")
        self.json_path = os.path.join(self.folder, name + ".json")
        self.py_path = os.path.join(self.folder, name + ".py")
        self.loaded = False
        self._locators = None

    # ------------------------------------------------------------ reading
    def load(self):
        """The Generated stored under this key, or None (absent, stale or unreadable)."""
        try:
            with open(self.json_path, encoding="utf-8") as f:
                meta = json.load(f)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError) as e:
            return self._unreadable(e)
        try:
            if meta.get("key") != self.key or "checkpoint_note" not in meta:
                return None                # stale: the function or a callee changed
            payload = {k: v for k, v in meta.items() if k != "digest"}
            if meta["digest"] != cache_key.digest(sorted(payload.items())):
                raise CorruptEntry("its digest does not match")
            globs = {name: cache_key.resolve(loc, self.deps)
                     for name, loc in meta["globals"].items()}
            gen = Generated(*(meta[k] for k in Generated.FIELDS), globs,
                            checkpoint_note=meta["checkpoint_note"])
        except (AttributeError, KeyError, TypeError, CorruptEntry, Uncacheable) as e:
            return self._unreadable(e)
        self.loaded = True
        self._locators = meta["globals"]
        return gen

    def _unreadable(self, e):
        warn("ignoring the unreadable gradient cache entry %s of %r (%s: %s); compiling it "
             "again" % (self.json_path, self.qualname, type(e).__name__, e))
        return None

    # ------------------------------------------------------------ the module
    def namespace(self, gen, text, builtins):
        """Globals of the generated module holding ``text`` (the backward and its helpers),
        imported from its file in the cache; None when it cannot be cached."""
        if self._locators is None:
            locators = {}
            # Only the globals the code reads: the namespace also holds every rule helper,
            # the users' custom_vjp pullbacks among them (one defined in a notebook would
            # otherwise keep every other gradient out of the cache).
            read = set(_NAME.findall(text))
            for name, value in gen.globals.items():
                if name not in read:
                    continue
                loc = cache_key.locate(value, self.deps)
                if loc is None:
                    _warn_once(self.where, "cannot cache the gradient of %r: its backward "
                               "reads %s (%s), which another process cannot find again; "
                               "it is compiled in each process" % (
                                   self.qualname, name, type(value).__name__))
                    return None
                locators[name] = loc
            self._locators = locators
        body = _MODULE_HEADER.format(qualname=self.qualname, where=self.where,
                                     argtypes=", ".join(self.types), key=self.key) + "\n" + text
        try:
            try:
                with open(self.py_path, encoding="utf-8") as f:
                    current = f.read()
            except (FileNotFoundError, UnicodeDecodeError):
                current = None
            if current != body:
                if self.loaded:
                    warn("the generated module %s of %r did not match its cache entry; "
                         "it is written again" % (self.py_path, self.qualname))
                os.makedirs(self.folder, exist_ok=True)
                _write(self.py_path, body.encode("utf-8"))
        except OSError as e:
            return self._cannot_write(e)
        ns = dict(gen.globals)
        ns.update(builtins)
        # Numba's cached machine code names its module: one key, one name.
        return _import(_MODULE_PREFIX + self.key[:32], self.py_path, body, ns)

    # ------------------------------------------------------------ writing
    def commit(self, gen):
        """Record ``gen`` under the key, once its module compiled (the JSON file is what
        makes an entry visible, so it is written last)."""
        if self.loaded:
            return
        meta = {k: getattr(gen, k) for k in Generated.FIELDS}
        meta["checkpoint_note"] = gen.checkpoint_note
        meta.update(format=cache_key.FORMAT, key=self.key, qualname=self.qualname,
                    globals=self._locators)
        meta["digest"] = cache_key.digest(sorted(meta.items()))
        try:
            _write(self.json_path, json.dumps(meta, indent=1).encode("utf-8"))
        except OSError as e:
            self._cannot_write(e)

    def _cannot_write(self, e):
        _warn_once((self.folder, self.qualname), "cannot write the gradient cache of %r in "
                   "%s (%s); it is compiled in each process" % (self.qualname, self.folder, e))


def _file_safe(name):
    # '<locals>', '<ipython-input-1-...>': not in file names.
    return re.sub(r"[^\w.-]", "", name)


def _write(path, data):
    """Write ``data`` to ``path`` atomically: readers see the old file or the new one."""
    tmp = "%s.%s.tmp" % (path, uuid.uuid4().hex[:12])
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_MODULE_PREFIX = "_numba_adstack_cached_"


def _import(module_name, path, text, namespace):
    """Run ``text`` as module ``module_name`` defined in file ``path``. Numba's cached
    machine code finds its module by name, hence the entry in sys.modules (kept when
    :class:`_LinkedModules` made it first)."""
    with _import_lock:
        module = sys.modules.get(module_name)
        if module is None:
            module = sys.modules[module_name] = type(sys)(module_name)
    module.__file__ = path
    module.__dict__.update(namespace)
    exec_file_source(text, path, module.__dict__)
    return module.__dict__


class _LinkedModules:
    """Finds a generated module that cached machine code names before its backward was
    loaded in this process: a cached caller that links the backward of a cached gradient
    (``f.grad`` called from jitted code). Numba then only rebuilds the environment of the
    linked code, which nopython code reads nothing from; the module is filled in when the
    backward itself is loaded (``_import``)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if not name.startswith(_MODULE_PREFIX):
            return None
        import importlib.machinery
        return importlib.machinery.ModuleSpec(name, _LinkedModules)

    @staticmethod
    def create_module(spec):
        return type(sys)(spec.name)

    @staticmethod
    def exec_module(module):
        pass


sys.meta_path.append(_LinkedModules)


def lookup(dispatcher, argtypes, parallel):
    """The cache entry of this backward, or None when ``dispatcher`` is not cached or its
    dependencies cannot be keyed (a warning says why, once)."""
    if not is_enabled(dispatcher):
        return None
    opts = dispatcher.ad_options
    budget = opts["frame_budget"]
    options = (opts["ad_stack_size"], opts["storage"], cache_key.stable_repr(opts["wrt"]),
               budget if budget is not None else config.get_frame_budget(), bool(parallel),
               cache_key.stable_repr(dispatcher.backward_options),
               # a given error_model is the backward's own too (numba_pipeline.OWN_MODEL)
               "error_model" in dispatcher.targetoptions, config.checked_backwards(),
               (opts.get("checkpoint"), opts.get("snapshots"), opts.get("memory_budget")),
               bool(opts.get("ieee_products")))
    try:
        deps = Dependencies(dispatcher.py_func)
        # A function passed as an argument is inlined: its source is keyed too.
        for fn in _argument_functions(argtypes):
            deps.parts.append(("argument function", fn.__qualname__,
                               tuple(Dependencies(fn).parts)))
    except Uncacheable as e:
        _warn_once(dispatcher.py_func, "cannot cache the gradient of %r: %s; it is compiled "
                   "in each process" % (dispatcher.py_func.__qualname__, e))
        return None
    return Entry(dispatcher, argtypes, deps, options)


# Function arguments (specialize.py) are keyed by the function they hold.
def _type_key(t):
    """An argument type as the key spells it: a function by its module and name, not by
    the address Numba's name for its type carries."""
    if isinstance(t, types.Dispatcher):
        fn = t.dispatcher.py_func
        return "function %s.%s" % (fn.__module__, fn.__qualname__)
    if isinstance(t, types.BaseTuple) and any(_argument_functions([t])):
        return "(%s)" % ", ".join(_type_key(u) for u in t)
    return str(t)


def _argument_functions(argtypes):
    for t in argtypes:
        if isinstance(t, types.Dispatcher):
            yield t.dispatcher.py_func
        elif isinstance(t, types.BaseTuple):
            yield from _argument_functions(list(t))
