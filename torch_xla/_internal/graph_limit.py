"""torch_xla.compile(fn, max_different_graphs=N): a function whose calls trace more than N
different graphs raises, naming where the new graph departs from the ones seen (PyTorch/XLA's
dynamic shape detector, with its messages). A graph is the sequence of ops the call records, each
with its result's shape (`_XLAC._xla_op_log_begin/_end`); the graphs seen are kept per function.
"""
import weakref

_seen = weakref.WeakKeyDictionary()  # function -> [op sequences], in the order first traced


def _expected(lines):
    if len(lines) == 1:
        return [f'Expected: {lines[0]}']
    return ['Expected either of:'] + [f'  - {line}' for line in lines]


def check(fn, ops, limit):
    """Records `ops` as a graph of `fn`, raising RuntimeError when it is a new graph past `limit`."""
    graphs = _seen.setdefault(fn, [])
    if ops in graphs:
        return
    if len(graphs) < limit:
        graphs.append(ops)
        return

    def common(g):
        n = 0
        while n < len(g) and n < len(ops) and g[n] == ops[n]:
            n += 1
        return n

    at = max(common(g) for g in graphs)
    expected = []
    for g in graphs:  # what the graphs that go furthest along this one do next, first seen first
        if common(g) == at and len(g) > at and g[at] not in expected:
            expected.append(g[at])
    lines = [f'Maximum number of different graphs allowed per function exceeded: {limit}']
    if at < len(ops):
        lines.append(f'Got: {ops[at]}')
        lines += _expected(expected) if expected else ['Expected: the end of the function']
    else:
        lines.append(f'Reached the end of the function at: {ops[at - 1]}' if at else
                     'Reached the end of the function before any op')
        lines += _expected(expected)
    raise RuntimeError('\n'.join(lines) + '\n')
