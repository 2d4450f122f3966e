"""Names in the generated source, and the line buffer it is written into."""
import keyword
import math

import numpy as np
from numba.typed import List

from ..generated_source import identifier  # noqa: F401  (the stem of generated names)
from ..runtime import RUNTIME


#: What the IR name of a value's adjoint adds to the value's.
_ADJOINT = ".bar"


def _word(name):
    """``name`` with each character that is not a word character (a letter or a digit,
    any script, or ``_``) made ``_``."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


class Names:
    """Source names of IR variables, their adjoints, fresh temporaries and the globals the
    generated module needs (``globals``: name -> object)."""

    def __init__(self, target, reserved=(), counter=0):
        self.target = target
        self.globals = {"math": math, "np": np}
        self.globals.update(RUNTIME)
        self.globals["List"] = List
        self._global_names = {}
        self._names = {}
        self._used = set(self.globals) | set(keyword.kwlist) | set(reserved)
        self._counter = counter
        self._stems = {}
        self.mentions = None    # while a helper is emitted: the names handed out (a set)
        self.seeds = {}         # source name of a seed -> the IR name it seeds

    def fresh(self, base):
        self._counter += 1
        name = "_%s%d" % (base, self._counter)
        self._used.add(name)
        return name

    def unique(self, stem):
        """A name of the generated code's own, ``stem`` and a number, unlike every name
        given (fresh temporaries keep their own numbering)."""
        k = self._stems.get(stem, 0)
        while True:
            k += 1
            name = "%s%d" % (stem, k)
            if name not in self._used:
                break
        self._stems[stem] = k
        self._used.add(name)
        return name

    def n(self, var):
        """Source name of an IR variable."""
        got = self._name(var if isinstance(var, str) else var.name)
        if self.mentions is not None:
            self.mentions.add(got)
        return got

    def _name(self, name):
        got = self._names.get(name)
        if got is None:
            base = _word(name).strip("_") or "v"
            if base[0].isdigit():
                base = "v" + base
            got, k = base, 1
            while got in self._used:
                k += 1
                got = "%s_%d" % (base, k)
            self._used.add(got)
            self._names[name] = got
        return got

    def seed(self, var):
        """Source name of the early seed of a fused loop's sum, or of the elements of an
        array a map loop fills (:mod:`..plan.seeds`)."""
        name = var if isinstance(var, str) else var.name
        got = "_seed_" + self._name(name)
        self.seeds[got] = name
        if self.mentions is not None:
            self.mentions.add(got)
        return got

    def bar(self, var):
        """Source name of the adjoint of an IR variable."""
        name = var if isinstance(var, str) else var.name
        return self.n(name + _ADJOINT)

    def values(self):
        """``{source name: (IR name of the value, whether it names the value's adjoint)}``
        of the names given so far."""
        out = {}
        for name, source in self._names.items():
            adjoint = name.endswith(_ADJOINT)
            out[source] = (name[:-len(_ADJOINT)] if adjoint else name, adjoint)
        return out

    def gname(self, value):
        """Name of a global object in the generated module."""
        key = id(value)
        if key not in self._global_names:
            if value is math:
                name = "math"
            elif value is np:
                name = "np"
            else:
                value = self.target.global_map.get(id(value), value)
                preferred = self.target.module_name(value)
                if preferred is not None and preferred not in self._used:
                    name = preferred        # code reads as it was written
                    self._used.add(name)
                else:
                    base = getattr(value, "__name__", type(value).__name__)
                    name = self.fresh("g_" + _word(str(base).split(".")[-1]))
                self.globals[name] = value
            self._global_names[key] = name
        return self._global_names[key]
