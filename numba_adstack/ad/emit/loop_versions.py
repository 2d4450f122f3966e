"""Loops the sweep reverses twice in the text, under checks made once before them.

Some plans hold only where a run-time check does: a store's indices are not negative
(:mod:`..plan.read_seeds`), the offsets of an argument's reads are ordered
(:mod:`..plan.sweep_assigned`). Where the sweep reaches a loop such a plan touches, it
computes whether every check holds (``_fast<header>``), sets up the adjoints each way
(an assigned adjoint's elements the loop does not reach set to zero, or all of them),
and writes the loop's reverse twice: as planned when the checks hold, and the general
way otherwise. A test inside the loop instead kept LLVM from optimising it (it does not
unswitch the loop): 3.0 ms to 3.7 ms on numba-examples' ``move_mean``.
"""
from contextlib import contextmanager

from ..generated_source.code import all_of, expr, stmt
from .indexed_seeds import linear_expr

#: The test of a check ``(form, op)``: ``form op 0``.
_CHECK = {">": "{} > 0", ">=": "{} >= 0"}


class LoopVersions:
    def __init__(self, cx):
        self.cx = cx
        self.fast = None        # inside a loop's reverse: whether its checks held

    def loop(self, L, lp, reverse):
        """``reverse(L)`` writes the sweep's reverse of loop ``lp``."""
        cx = self.cx
        assigned = sorted((x, a) for x, a in cx.plan.sweep_assigned.items() if a.loop is lp)
        if self.fast is not None or cx.checkpoint.applies(lp):
            for x, _ in assigned:       # (the general way: reversed in segments)
                L.code("{}[:] = 0.0", cx.names.bar(x))
            reverse(L)
            return
        r = cx.adjoints.ref
        tests = [expr("not {}", flag) for flag in cx.indexed.flags_stored_in(lp)]
        tests += [expr(_CHECK[op], linear_expr(form, r))
                  for _, a in assigned for form, op in a.checks]
        zero = [[] if a.every else self._zero_outside(
            cx.names.bar(x), a.first, linear_expr(a.first, r), linear_expr(a.stop, r))
            for x, a in assigned]
        if not tests:
            for lines in zero:
                L(lines)
            with self._version(True):
                reverse(L)
            return
        test = "_fast%d" % lp.header
        L.code("{} = {}", test, all_of(tests))
        for lines, (x, _) in zip(zero, assigned):
            if not lines:
                with L.block("if not {}:", test):
                    L.code("{}[:] = 0.0", cx.names.bar(x))
                continue
            with L.block("if {}:", test):
                L(lines)
            with L.block("else:"):
                L.code("{}[:] = 0.0", cx.names.bar(x))
        for fast in (True, False):
            with L.block("if {}:", test) if fast else L.block("else:"), \
                    self._version(fast):
                reverse(L)

    @staticmethod
    def _zero_outside(bar, form, first, stop):
        """The statements setting the elements of ``bar`` outside ``[first, stop)`` to
        zero (all of them when ``stop <= first``); ``first`` (of the linear form
        ``form``) is not negative (proved or checked)."""
        if not form[0] and form[1] == 0:        # (from the first element)
            return [stmt("{}[max({}, 0):] = 0.0", bar, stop)]
        return [stmt("{}[:{}] = 0.0", bar, first),
                stmt("{}[max({}, {}):] = 0.0", bar, stop, first)]

    @contextmanager
    def _version(self, fast):
        self.fast = fast
        try:
            yield
        finally:
            self.fast = None

