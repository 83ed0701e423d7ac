"""Fixture for rule N22: a second template module, imported by alpha.py."""


def beta_helper(x):
    return x * _BETA


_BETA = 3


def _inner(x):
    # Same name as alpha's _inner: a reference dumped from alpha.py gets alpha's.
    return -1.0
