"""TEST DOUBLE: the smallest object that lets the template modules *define*
reference/init functions decorated with ``@torch.no_grad()`` without importing
torch. Those functions are never called; only their source text is dumped
(``inspect.getsource``), exactly like the real dumper renders them.
"""


def no_grad():
    def deco(fn):
        return fn
    return deco


def inference_mode():
    return no_grad()
