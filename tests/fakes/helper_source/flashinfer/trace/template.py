"""Fixture for `fib normalize` rule N22: the package's shared module (not a template module)."""

_SCALE = 2


def scaled(x):
    return x * _SCALE
