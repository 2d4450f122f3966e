"""Python functions defined from generated source (a backward, a JVP, a kernel's
gradient, a pullback's helper), their text kept where ``inspect`` and tracebacks find it.
"""
import keyword
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
    exec_file_source(source, filename, namespace)
    return namespace[fname]


def exec_file_source(source, filename, namespace):
    """Run ``source`` in ``namespace`` as the file ``filename`` (the gradient cache's
    modules are real files, so that Numba caches what they define)."""
    exec(compile(source, filename, "exec"), namespace)


def identifier(name):
    """``name`` (a function's ``__name__``: ``<lambda>``, a name made by
    ``functools.partial`` or with non-ASCII letters) as an ASCII identifier, the stem of
    the generated functions' names."""
    base = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_"
                   for c in str(name))
    if not base.strip("_"):
        base = "function"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = "f_" + base
    return base
