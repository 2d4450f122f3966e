"""The generated surface (tests/surface_cases.py: every ufunc Numba types in every call
form that writes, the augmented operators on arrays and views and their operator.i*
forms): a fixed sample of 8 here, each RIGHT against finite differences, REFUSED by name or
not compiled by Numba itself, never WRONG and never a crash.
NUMBA_ADSTACK_SURFACE_FULL=1 runs every case (scripts/surface_report.py prints the table)."""
import os
import random

import pytest

import surface_cases

_ALL = surface_cases.cases()
_FULL = os.environ.get("NUMBA_ADSTACK_SURFACE_FULL") == "1"
_AUGMENTED = [c for c in _ALL if ".array." in c.name or ".view." in c.name]
_UFUNCS = [c for c in _ALL if c not in _AUGMENTED]
_SAMPLE = _ALL if _FULL else (random.Random(3).sample(_UFUNCS, 10)[:4]
                              + random.Random(3).sample(_AUGMENTED, 6)[:4])


@pytest.mark.parametrize("case", _SAMPLE, ids=[c.name for c in _SAMPLE])
def test_generated_surface_case_is_right_or_refused(case):
    cls, detail = surface_cases.classify(case)
    assert cls in ("RIGHT", "REFUSED", "NOT_NUMBA"), (cls, detail, case.source)
