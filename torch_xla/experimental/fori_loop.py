"""`fori_loop(lower, upper, body_fun, *init)` and torch's `while_loop` on xla tensors (PyTorch/XLA's
torch_xla.experimental.fori_loop).

`fori_loop` runs its body (upper - lower) times, each iteration traced into the lazy graph.
PyTorch/XLA lowers both to one XLA while loop; that loop form is not built yet, and torch's
`while_loop` (re-exported here) does not run on xla tensors yet: torch traces it with dynamo, whose
data-dependent condition this device cannot give it."""
import torch
from torch._higher_order_ops.while_loop import while_loop


def fori_loop(lower, upper, body_fun, *input_value):
    """body_fun applied (upper - lower) times, each time to what it returned the time before:
    returns (upper, *results) for bounds given as tensors, as PyTorch/XLA's fori_loop does, and
    the results alone for Python integers."""
    tensors = isinstance(lower, torch.Tensor) or isinstance(upper, torch.Tensor)
    start = int(lower.item()) if isinstance(lower, torch.Tensor) else int(lower)
    stop = int(upper.item()) if isinstance(upper, torch.Tensor) else int(upper)
    values = input_value
    for _ in range(start, stop):
        out = body_fun(*values)
        values = out if isinstance(out, tuple) else (out, )
    result = values[0] if len(values) == 1 else values
    return (upper, result) if tensors else result


__all__ = ['fori_loop', 'while_loop']
