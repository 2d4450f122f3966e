"""Python functions defined from generated source (a backward, a JVP, a kernel's
gradient, a pullback's helper), their text kept where ``inspect`` and tracebacks find it.
"""
import linecache
import threading

_source_counter = [0]
_lock = threading.Lock()


def exec_source(fname, source, namespace, tag):
    """Define ``fname`` from generated source; keep the text where ``inspect`` finds it."""
    with _lock:
        _source_counter[0] += 1
        filename = "<numba_adstack %s %d>" % (tag, _source_counter[0])
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[fname]
