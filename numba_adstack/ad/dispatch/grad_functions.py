"""``grad_jit`` functions as the modules below :mod:`.api` see them.

:mod:`.api` defines the class of ``grad_jit`` functions (``GradDispatcher``) and the
decorator, on top of :mod:`.backward`, :mod:`.vjp` and forward mode. Some modules those
build on need both: second-order calls (:mod:`..calls.second_order`), checkpointed helpers
(:mod:`..calls.checkpoint_call`), implicit roots (:mod:`..calls.implicit`), gradients called from jitted
code (:mod:`.jitted`) and pullbacks (:mod:`.vjp`) ask whether a Numba function is a
``grad_jit`` one and make ``grad_jit`` functions of helpers. They ask here; :mod:`.api`
registers its class and decorator when it is imported (importing ``numba_adstack`` does),
so that every import points down.
"""
_registered = {}


def register(dispatcher_class, decorator):
    """Called once, by :mod:`.api`: the class of ``grad_jit`` functions and ``grad_jit``."""
    _registered["class"] = dispatcher_class
    _registered["grad_jit"] = decorator


def is_grad_function(obj):
    """Is ``obj`` a ``grad_jit`` function (a ``GradDispatcher``)?"""
    return isinstance(obj, _registered["class"])


def grad_jit(py_func, **options):
    """``numba_adstack.grad_jit(py_func, **options)``."""
    return _registered["grad_jit"](py_func, **options)


def like(disp, py_func, ad_options):
    """A ``grad_jit`` function of ``py_func`` with the Numba options of the ``grad_jit``
    function ``disp`` and the differentiation options ``ad_options``."""
    return _registered["class"](py_func, targetoptions=dict(disp.targetoptions),
                                ad_options=ad_options)
