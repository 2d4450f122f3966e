"""State numbers of guarded sequences, resolved once the whole backward is written.

A guarded sequence (see :mod:`..plan.shapes`) keeps the node that runs next in a state
variable. Nodes that turn out to do nothing but pass control on (an empty block in the
sweep) are left out: whoever would set the state to such a node sets it to the node it
passes to. Which nodes those are is known only once they are written, so states are
written as markers and numbered at the end.
"""
import re

# Markers are integer literals (the text stays Python for the passes that parse it), in a
# range no program writes.
_BASE = 987_654_000_000
_MARK = re.compile(r"\b9876540\d{5}\b")


class States:
    def __init__(self):
        self.alias = {}         # marker -> the marker of the node it passes control to
        self.number = {}        # marker -> the node's number in its region
        self._marker = {}

    def marker(self, region, index, sweep=True):
        """The marker of node ``index`` of ``region`` in the sweep (or in the replay:
        their nodes are left out independently)."""
        key = (sweep, None if region.loop is None else region.loop.header, index)
        got = self._marker.get(key)
        if got is None:
            got = str(_BASE + len(self._marker))
            self._marker[key] = got
            self.number[got] = index
        return got

    def skip(self, marker, to):
        """The node of ``marker`` does nothing but go on to the node of ``to``."""
        self.alias[marker] = to

    def resolve(self, text):
        """``text`` with every marker replaced by its node's number."""
        def number(m):
            key = m.group(0)
            while key in self.alias:
                key = self.alias[key]
            return str(self.number[key])
        return _MARK.sub(number, text)
