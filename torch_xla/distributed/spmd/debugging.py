"""Pictures of shardings (PyTorch/XLA's `torch_xla.distributed.spmd.debugging`): which device
holds which tile of a tensor, as a `rich` table (the first two tiled dimensions: rows and columns).

    from torch_xla.distributed.spmd.debugging import visualize_tensor_sharding
    visualize_tensor_sharding(t)   # prints the table, and returns it
"""
import re
from typing import Dict, List, Tuple

import numpy as np

import torch_xla
import torch_xla.runtime as xr


def _tiles(sharding: str) -> Tuple[int, int, Dict[Tuple[int, int], List[int]]]:
    """(rows, columns, devices of each (row, column) tile) of a sharding's first two tiled
    dimensions; a replicated sharding is one tile held by every device."""
    text = sharding.strip()
    n = xr.global_runtime_device_count()
    if text in ('', '{replicated}') or text.startswith('{maximal'):
        return 1, 1, {(0, 0): list(range(n))}
    m = re.fullmatch(r'\{devices=\[([\d,]+)\]([\d,]+)( last_tile_dim_replicate)?\}', text)
    if m is None:
        raise ValueError(f'visualize_sharding: cannot draw the sharding {sharding!r} '
                         '(replicated or devices=[...] tilings only)')
    dims = [int(d) for d in m.group(1).split(',')]
    devices = np.array([int(d) for d in m.group(2).split(',')])
    tile_dims = dims[:-1] if m.group(3) else dims  # the last lists a tile's replicas
    rows, cols = (1, tile_dims[0]) if len(tile_dims) == 1 else (tile_dims[0], tile_dims[1])
    # A cell is held by its devices in the dimensions behind the first two, and their replicas.
    grid = devices.reshape(rows, cols, -1)
    return rows, cols, {(r, c): sorted(int(d) for d in grid[r, c]) for r in range(rows) for c in range(cols)}


def visualize_sharding(sharding: str, use_color: bool = True, scale: float = 1., min_width: int = 9,
                       max_width: int = 80):
    """Prints and returns a `rich` table of `sharding` (XLA syntax, as
    `torch_xla._XLAC._get_xla_sharding_spec` gives it): one cell per tile of the first two
    tiled dimensions, naming the devices that hold it."""
    try:
        import rich.align
        import rich.box
        import rich.console
        import rich.padding
        import rich.style
        import rich.table
    except ImportError:
        raise ImportError('visualize_sharding draws with `rich`: pip install rich') from None
    rows, cols, tiles = _tiles(sharding)
    print(f'Visualizing {sharding} (showing up to the first two dimensions)')
    console = rich.console.Console(width=max_width)
    use_color = use_color and console.color_system is not None
    table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0, highlight=not use_color,
                             pad_edge=False, box=rich.box.SQUARE if not use_color else None)
    kind = xr.device_type() or 'CPU'
    width = min(max(int(3 * scale * 1.5 * cols), min_width), max_width)
    palette = ['red', 'green', 'blue', 'magenta', 'cyan', 'yellow', 'bright_black', 'white']
    for r in range(rows):
        cells = []
        for c in range(cols):
            devices = tiles[(r, c)]
            color = palette[(r * cols + c) % len(palette)] if use_color else None
            label = f'{kind} ' + ','.join(str(d) for d in devices)
            cells.append(rich.padding.Padding(rich.align.Align(label, 'center', vertical='middle'), (1, 1, 1, 1),
                                              style=rich.style.Style(bgcolor=color)))
        table.add_row(*cells)
    for column in table.columns:
        column.width = width
    console.print(table)
    return table


def visualize_tensor_sharding(t, **kwargs):
    """visualize_sharding of the xla tensor `t`'s sharding."""
    from torch_xla.distributed.spmd.xla_sharded_tensor import XLAShardedTensor
    tensor = t.global_tensor if isinstance(t, XLAShardedTensor) else t
    return visualize_sharding(torch_xla._XLAC._get_xla_sharding_spec(tensor), **kwargs)
