"""What a gradient's cache key is made of, in a form that crosses processes: a test whose
worker misses the parent's cache entry says which part differs."""
import numba

from numba_adstack.ad.dispatch import cache


def key_parts(dispatcher, args, argtypes=None):
    """``repr`` of each part of the key of ``dispatcher``'s serial backward."""
    if argtypes is None:
        argtypes = tuple(numba.typeof(a) for a in args)
    entry = cache.lookup(dispatcher, tuple(argtypes), False)
    if entry is None:
        return None
    versions, deps, types, options = entry.key_parts
    return {"versions": repr(versions), "dependencies": repr(deps), "types": repr(types),
            "options": repr(options)}


def differences(here, there):
    """The parts of two ``key_parts`` that differ, both ways."""
    if here is None or there is None:
        return "no cache entry (here %r, there %r)" % (here is None, there is None)
    keys = ("versions", "dependencies", "types", "options")
    out = ["%s: here %s, there %s" % (k, here[k], there[k]) for k in keys
           if here[k] != there.get(k)]
    notes = ["%s: here %s, there %s" % (k, here.get(k), there.get(k)) for k in
             sorted((set(here) | set(there)) - set(keys))]
    return "; ".join(out or ["the same key"] + notes)
