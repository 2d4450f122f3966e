"""What a gradient compile says while it runs.

Numba compiles in silence, and so does a gradient whose first call takes a second. A
first call that runs for many seconds would look like a hang: once a compile has run
past :func:`notice_seconds` (5 s; ``NUMBA_ADSTACK_COMPILE_NOTICE=seconds``, ``0`` for
never), one line on stderr names the function and its argument types (the logger
``numba_adstack`` at WARNING: configure it with logging to route or silence it). With
``NUMBA_ADSTACK_VERBOSE=1`` every phase logs a line as it starts (:func:`phase`) and the
compile ends with a summary of its times.
"""
import contextlib
import logging
import os
import sys
import threading

LOG = logging.getLogger("numba_adstack")
DEFAULT_NOTICE_SECONDS = 5.0
_active = threading.local()


def notice_seconds():
    """Seconds a compile runs before it says so; None for never."""
    raw = os.environ.get("NUMBA_ADSTACK_COMPILE_NOTICE", "").strip().lower()
    if raw in ("0", "off", "never", "none"):
        return None
    try:
        return float(raw) if raw else DEFAULT_NOTICE_SECONDS
    except ValueError:
        return DEFAULT_NOTICE_SECONDS


def phase(what, name, argtypes):
    """Log the start of a phase of the compile of ``name``'s gradient (verbose only)."""
    LOG.info("gradient of %s(%s): %s", name, ", ".join(map(str, argtypes)), what)


def _say(message):
    if LOG.hasHandlers():
        LOG.warning(message)
    elif LOG.isEnabledFor(logging.WARNING):     # (logging's last resort: no prefix)
        sys.stderr.write("numba_adstack: %s\n" % message)
        sys.stderr.flush()


@contextlib.contextmanager
def compiling(name, argtypes):
    """Around the compile of ``name``'s gradient for ``argtypes``: past the threshold,
    one line saying what is being compiled (only the outermost compile of a thread)."""
    seconds = notice_seconds()
    if seconds is None or getattr(_active, "depth", 0):
        _active.depth = getattr(_active, "depth", 0) + 1
        try:
            yield
        finally:
            _active.depth -= 1
        return
    message = ("compiling the gradient of %s(%s), the first call for these argument "
               "types; it has taken more than %g s so far (NUMBA_ADSTACK_VERBOSE=1 logs "
               "its phases)" % (name, ", ".join(map(str, argtypes)), seconds))
    timer = threading.Timer(seconds, _say, args=(message,))
    timer.daemon = True
    _active.depth = 1
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        _active.depth = 0
