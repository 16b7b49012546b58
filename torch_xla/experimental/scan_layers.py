"""`scan_layers(layers, input_data)`: a stack of layers applied in order, as PyTorch/XLA's
`torch_xla.experimental.scan_layers` does with `scan` over the layers' stacked weights. Here each
layer is traced in turn (see torch_xla.experimental.scan: the graph grows with the depth)."""
from typing import Iterable

import torch


def scan_layers(layers: Iterable[torch.nn.Module], input_data, partition_fn=None, is_layer_pure: bool = False):
    """The output of the last layer of `layers`, each called with the previous one's output (the
    first with `input_data`). The layers must be of one kind (PyTorch/XLA scans over their stacked
    parameters), which is checked."""
    layers = list(layers)
    if not layers:
        return input_data
    first = layers[0]
    for layer in layers[1:]:
        if type(layer) is not type(first):
            raise ValueError(f'scan_layers: all layers must be of one type; got {type(first).__name__} and '
                             f'{type(layer).__name__}')
        shapes = [p.shape for p in layer.parameters()]
        if shapes != [p.shape for p in first.parameters()]:
            raise ValueError('scan_layers: all layers must have parameters of the same shapes')
    out = input_data
    for layer in layers:
        out = layer(out)
    return out
