"""Readable names of the function being compiled, for error messages."""
import re
import sys

from numba.core.lowering import BaseLower


def demangle(name):
    """Best-effort demangling of a Numba (Itanium-style) function name to a dotted name."""
    if not name.startswith("_ZN"):
        return name
    i, parts = 3, []
    while i < len(name) and name[i].isdigit():
        j = i
        while name[j].isdigit():
            j += 1
        n = int(name[i:j])
        parts.append(name[j:j + n])
        i = j + n
    dotted = ".".join(parts) or name
    return re.sub(r"_([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), dotted)


def _lowerers():
    """The Numba lowerers on the current call stack, innermost first."""
    frame = sys._getframe(1)
    seen = []
    while frame is not None:
        obj = frame.f_locals.get("self")
        if isinstance(obj, BaseLower) and all(obj is not s for s in seen):
            seen.append(obj)
        frame = frame.f_back
    return seen


def function_name(builder):
    """The qualified name of the Python function whose LLVM function ``builder`` is in.

    A parfor (prange) body is compiled as its own function: it is named after the function
    that contains it.
    """
    llname = builder.function.name
    lowerers = _lowerers()
    for k, low in enumerate(lowerers):
        fndesc = getattr(low, "fndesc", None)
        if fndesc is not None and fndesc.mangled_name == llname:
            name = "%s.%s" % (fndesc.modname, fndesc.qualname)
            if "__numba_parfor_gufunc" in fndesc.qualname:
                for outer in lowerers[k + 1:]:
                    ofd = getattr(outer, "fndesc", None)
                    if ofd is not None and "__numba_parfor_gufunc" not in ofd.qualname:
                        return "prange body of %s.%s" % (ofd.modname, ofd.qualname)
            return name
    return demangle(llname)
