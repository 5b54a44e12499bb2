"""Shared runtime argument checking for model helpers (used across our repos)."""
import torch
from pydantic import ConfigDict, validate_call

_CFG = ConfigDict(arbitrary_types_allowed=True, strict=False)


def checked(fn):
    """Validate helper arguments against their annotations at call time."""
    return validate_call(config=_CFG)(fn)
