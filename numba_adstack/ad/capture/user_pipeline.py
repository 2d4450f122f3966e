"""The passes a gradient's capture runs before typing: Numba's, or those of the function's
own ``pipeline_class`` (``njit(pipeline_class=...)``), the user's passes included, so that
the IR the gradient is taken of is the IR the primal compiles."""
from numba.core.compiler import DefaultPassBuilder
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import FixupArgs, InlineInlinables

from ...errors import NonDifferentiableError


def passes_before_typing(pipeline, user_pipeline):
    """The ``(pass, description)`` list up to ``NopythonTypeInference`` for ``pipeline``
    (a compiler instance, whose ``state`` the pipelines are defined for). A user pipeline
    with passes of its own after typing, which could change what the primal computes
    unseen by the gradient, is refused, as is one without Numba's nopython frontend."""
    state = pipeline.state
    if user_pipeline is None:
        return DefaultPassBuilder.define_untyped_pipeline(state).passes
    name = state.func_id.func_qualname
    numba_typed = {p for p, _ in DefaultPassBuilder.define_nopython_pipeline(state).passes}
    for upm in user_pipeline.define_pipelines(pipeline):
        kinds = [p for p, _ in upm.passes]
        if NopythonTypeInference not in kinds:
            continue
        at = kinds.index(NopythonTypeInference)
        if InlineInlinables not in kinds[:at] or FixupArgs not in kinds[:at]:
            continue
        extra = [p.__name__ for p in kinds[at:] if p not in numba_typed]
        if extra:
            raise NonDifferentiableError(
                "cannot differentiate %r: its pipeline_class %s runs its own passes after "
                "typing (%s), which change the compiled program where the gradient cannot "
                "see it; run them before NopythonTypeInference, or differentiate with "
                "Numba's pipeline" % (name, user_pipeline.__qualname__, ", ".join(extra)),
                highlighting=False)
        return upm.passes[:at]
    raise NonDifferentiableError(
        "cannot differentiate %r: its pipeline_class %s has no nopython pipeline with "
        "Numba's FixupArgs, InlineInlinables and NopythonTypeInference passes, after which "
        "the gradient's capture adds its own; build it from Numba's "
        "DefaultPassBuilder.define_nopython_pipeline and add passes to it"
        % (name, user_pipeline.__qualname__), highlighting=False)
