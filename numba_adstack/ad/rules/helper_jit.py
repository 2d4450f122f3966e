"""``helper_jit``: ``numba.njit`` for the rules' and runtime's helpers, compiled once per
argument *type* rather than once per constant.

Numba compiles a function called from jitted code for the exact types at the call, and a
constant argument is typed as its value (``Literal[int](2)``): a helper taking an axis, a
section count or an index is compiled again for every value a program passes. The
gradient of one function with a few ``np.split`` calls compiled ``split_item_vjp`` eleven
times. A helper's dispatcher here tries the call with integer constants typed as plain
integers first (the caller converts them), and only where that does not type, because the
helper's body needs the value at compile time, with the constants as they are; it then
remembers to go straight there. Strings and booleans stay literal: helpers branch on them
at compile time (``method=``, ``unequal``), and they have few values.
"""
from numba import types
from numba.core import config
from numba.core.errors import TypingError
from numba.core.registry import CPUDispatcher


def _plain(ty):
    return types.unliteral(ty) if isinstance(ty, types.IntegerLiteral) else ty


class TypeSharingDispatcher(CPUDispatcher):
    """A CPU dispatcher that types integer constants at its calls by their type."""

    #: set on the first call that does not type without its constants' values
    needs_values = False

    def get_call_template(self, args, kws):
        if not self.needs_values and self._can_compile:
            plain = tuple(_plain(a) for a in args)
            plain_kws = {k: _plain(v) for k, v in kws.items()}
            if plain != tuple(args) or plain_kws != kws:
                try:
                    return super().get_call_template(plain, plain_kws)
                except TypingError:
                    self.needs_values = True
        return super().get_call_template(args, kws)


def helper_jit(fn=None, *, cache=False, **options):
    """``numba.njit(cache=cache, **options)``, with a :class:`TypeSharingDispatcher`."""
    if fn is None:
        return lambda f: helper_jit(f, cache=cache, **options)
    if config.DISABLE_JIT:
        return fn
    targetoptions = {"nopython": True, **options}
    disp = TypeSharingDispatcher(py_func=fn, locals={}, targetoptions=targetoptions)
    if cache:
        disp.enable_caching()
        _quietly_uncached(disp._cache)
    return disp


def _quietly_uncached(cache):
    """Numba caches no code that keeps a dynamic global (code compiled at -O0 may), and
    warns each time: a helper's such code simply stays uncached."""
    impl = cache._impl
    check = impl.check_cachable

    def check_cachable(cres):
        return not cres.library.has_dynamic_globals and check(cres)
    impl.check_cachable = check_cachable
