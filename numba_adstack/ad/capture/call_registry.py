"""The calls that a later phase rewrites instead of the capture inlining them
(checkpointed helpers, implicit solves, derivatives called in the function, recursion:
ad/calls/), each registered here by its module when imported, so that the capture
(:mod:`.pipeline`) names none of them."""
CALL_REWRITERS = []
PRIMITIVE_TESTS = []
TYPING_FAILURE_HOOKS = []
INLINE_REWRITERS = []


def register_call_rewriter(rewrite, is_primitive=None, on_typing_failure=None):
    """Let a later phase own some calls.

    ``rewrite(state, block, i, expr, called, defined_value, tuple_items)`` rewrites the
    call ``expr`` at ``block.body[i]`` (``called``: the object it calls, when known before
    typing) and returns True, or returns False when the call is not its kind.
    ``is_primitive(obj)``: the capture calls ``obj`` as it is (a rule differentiates it).
    ``on_typing_failure()``: raises a refusal the rewrite deferred until typing failed."""
    CALL_REWRITERS.append(rewrite)
    if is_primitive is not None:
        PRIMITIVE_TESTS.append(is_primitive)
    if on_typing_failure is not None:
        TYPING_FAILURE_HOOKS.append(on_typing_failure)


def register_inline_rewriter(rewrite):
    """Let a later phase own some calls of Numba functions that the capture would inline:
    ``rewrite(state, block, i, called, py_func)`` rewrites the call at ``block.body[i]``
    of the Numba function ``called`` (whose Python function is ``py_func``) and returns
    True, or returns False to leave it inlined (recursion: ad/calls/recursion.py)."""
    INLINE_REWRITERS.append(rewrite)


def typing_failed():
    """Raise the refusal a registered rewrite deferred until typing failed, if any."""
    for hook in TYPING_FAILURE_HOOKS:
        hook()
