"""`gradient_accumulation(train_step, iterable_tensors, model, *carried)`: gradients accumulated
over the rows of a batch, one `train_step` per row, as PyTorch/XLA's
torch_xla.experimental.gradient_accumulation does.

Each step is traced into the lazy graph in turn (PyTorch/XLA compiles one step into an XLA while
loop; that loop form is not built yet), so the values and gradients are those of the Python loop
that runs `train_step` per row, divides its loss by the number of rows and calls backward."""
from typing import Any, Callable, Sequence

import torch


def gradient_accumulation(train_step: Callable[..., Any], iterable_tensors: Sequence[torch.Tensor],
                          model: torch.nn.Module, *carried_tensors: torch.Tensor):
    """train_step(*rows, *carried) -> (loss, *new carried), for each row i of every tensor of
    `iterable_tensors` (all of one length): the model's parameters' gradients accumulate the
    losses divided by the number of rows. Returns the summed (divided) loss, followed by the
    last carried tensors when there are any. `train_step` must not change its inputs in place."""
    if not iterable_tensors:
        raise ValueError('iterable_tensors cannot be empty')
    for i, t in enumerate(iterable_tensors):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f'Element {i} of iterable_tensors is not a tensor')
        if t.numel() == 0:
            raise ValueError(f'Element {i} of iterable_tensors is empty')
    steps = iterable_tensors[0].shape[0]
    if any(t.shape[0] != steps for t in iterable_tensors):
        raise ValueError(f'iterable_tensors must all have {steps} rows: got '
                         f'{[t.shape[0] for t in iterable_tensors]}')
    del model  # its parameters' .grad accumulate through backward()
    accumulated = None
    carried = tuple(carried_tensors)
    for i in range(steps):
        rows = [t[i:i + 1] for t in iterable_tensors]
        versions = [t._version for t in rows + list(carried)]
        out = train_step(*rows, *carried)
        assert all(t._version == v for t, v in zip(rows + list(carried), versions)), \
            'train_step changed one of its input tensors in place: return the new value instead'
        loss, carried = (out[0], tuple(out[1:])) if isinstance(out, tuple) else (out, ())
        loss = loss / steps
        loss.backward()
        accumulated = loss.detach() if accumulated is None else accumulated + loss.detach()
    return (accumulated, *carried) if carried else accumulated
