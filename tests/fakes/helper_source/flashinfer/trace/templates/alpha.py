"""Fixture for `fib normalize` rule N22 (tests/fakes/README.md): a trace template module whose
helpers a dumped reference calls without defining them."""

import math
from typing import List

from ..template import scaled
from ._init_helpers import make_ones as ones
from .beta import beta_helper
from ...compiled_ext import fast_op

_EPS = 0.5


def _inner(x):
    return math.sqrt(x)


def _outer(x):
    return _inner(x) + _EPS


def _uses_template(x):
    return scaled(x)


def _uses_alias(n) -> List[float]:
    return ones(n)


def _uses_beta(x):
    return beta_helper(x)


def _uses_compiled(x):
    return fast_op(x)


if _EPS > 0:
    _conditional = 1


def _alpha_reference(x):
    return _outer(x) + _uses_template(x) + _uses_beta(x) + len(_uses_alias(2))
