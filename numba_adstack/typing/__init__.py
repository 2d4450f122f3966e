"""Numba types and typing templates of the adstack and its intrinsics (target independent)."""
from .types import AdStackType, ELEMENT_TYPES, STORAGES  # noqa: F401
from . import templates  # noqa: F401  (registers the typing templates)
