"""Compare two runs of a model tensor by tensor (PyTorch/XLA's model comparator).

In each run, `configure(dir)` (or MODELCMP_SAVEDIR) and `save(name, t[, step])` at the points to
compare write each tensor to `dir/[step-N/]name.K` (K counts saves of one name); then
`compare(dir1, dir2, rtol, atol)` reports every saved tensor that differs (and any saved in one
run only); an empty report means the runs agree. `python -m torch_xla.debug.model_comparator
dir1 dir2` does the same and exits 1 on a difference."""
import argparse
import os
import re
import sys
import traceback

import torch

_SAVE_DIR = None
_TENSOR_IDS = {}
_STEP = None


def _save_dir():
    if _SAVE_DIR is not None:
        return _SAVE_DIR
    from torch_xla._internal import config
    return config.MODELCMP_SAVEDIR.get() or None


def _is_master_ordinal():
    import torch_xla.core.xla_model as xm
    return xm.is_master_ordinal()


def _tensor_name(name):
    if name is not None:
        return name
    here = os.path.basename(__file__)
    for frame in reversed(traceback.extract_stack(limit=8)[:-1]):
        if os.path.basename(frame.filename) != here:
            return f'{os.path.basename(frame.filename)}.l{frame.lineno}'
    return 'noname'


def configure(save_dir):
    """Saves go to `save_dir` from now on (None: saves do nothing)."""
    global _SAVE_DIR, _TENSOR_IDS, _STEP
    _SAVE_DIR, _TENSOR_IDS, _STEP = save_dir, {}, None


def save(name, tensor, step=None):
    """Writes `tensor` (to the host) under `name` (None: the caller's file and line); returns it."""
    global _TENSOR_IDS, _STEP
    save_dir = _save_dir()
    if save_dir is None:
        return tensor
    data = tensor.cpu()
    if not _is_master_ordinal():
        return tensor
    name = _tensor_name(name)
    path = save_dir
    if step is not None:
        path = os.path.join(save_dir, f'step-{step}')
        os.makedirs(path, exist_ok=True)
        if step != _STEP:
            _STEP, _TENSOR_IDS = step, {}
    k = _TENSOR_IDS.get(name, 0)
    _TENSOR_IDS[name] = k + 1
    torch.save(data, os.path.join(path, f'{name}.{k}'))
    return tensor


def _index_of(sizes, flat):
    index = []
    for size in reversed(sizes):
        index.append(flat % size)
        flat //= size
    return list(reversed(index))


def compare_tensors(tensor1, tensor2, rtol=1e-05, atol=1e-08, max_diffs=25):
    """The elements where the two differ beyond max(rtol * the larger magnitude, atol), largest
    first ('' when none do)."""
    if list(tensor1.size()) != list(tensor2.size()):
        return f'Tensors have different shape: {list(tensor1.size())} vs. {list(tensor2.size())}\n'
    a, b = tensor1.flatten().tolist(), tensor2.flatten().tolist()
    diffs = [(abs(x - y), i, x, y) for i, (x, y) in enumerate(zip(a, b)) if abs(x - y) > max(max(abs(x), abs(y)) * rtol, atol)]
    report = ''.join(f'{_index_of(list(tensor1.size()), i)}: {x} vs. {y}\terror={e}\n'
                     for e, i, x, y in sorted(diffs, reverse=True)[:max_diffs])
    if len(diffs) > max_diffs:
        report += f'... aborting after {max_diffs} differences\n'
    return report


def _saved(path):
    found = set()
    for root, _, names in os.walk(path):
        for n in names:
            if re.match(r'.*\.\d+$', n):
                found.add(os.path.relpath(os.path.join(root, n), path))
    return found


def compare(save_dir1, save_dir2, rtol=1e-05, atol=1e-08, max_diffs=25):
    """A report of every saved tensor that differs between the two runs ('' when they agree)."""
    files1, files2 = _saved(save_dir1), _saved(save_dir2)
    report = ''
    for f in sorted(files1):
        if f not in files2:
            report += f'Mismatch: {f} not in {save_dir2}\n'
            continue
        diff = compare_tensors(torch.load(os.path.join(save_dir1, f)), torch.load(os.path.join(save_dir2, f)),
                               rtol=rtol, atol=atol, max_diffs=max_diffs)
        if diff:
            report += f'Changes in saved tensor "{f}"\n' + ''.join(f'  {line}\n' for line in diff.splitlines())
    for f in sorted(files2 - files1):
        report += f'Mismatch: {f} not in {save_dir1}\n'
    return report


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--rtol', type=float, default=1e-05)
    parser.add_argument('--atol', type=float, default=1e-08)
    parser.add_argument('--max_diffs', type=int, default=25)
    parser.add_argument('savedir1')
    parser.add_argument('savedir2')
    args = parser.parse_args()
    out = compare(args.savedir1, args.savedir2, rtol=args.rtol, atol=args.atol, max_diffs=args.max_diffs)
    if out:
        print(out, file=sys.stderr)
        sys.exit(1)
