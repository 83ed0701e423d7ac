"""Fixture for rule N22: helpers shared by the template modules."""

from __future__ import annotations

from typing import List


def make_ones(n: int) -> List[float]:
    return [1.0] * n
