"""Greedy decoding benchmark: transformers' GPT2LMHeadModel.generate on eager CPU PyTorch and on
this project's xla device, with the dynamic (default) or the static KV cache.

Small config with random weights (2 layers, n_embd 128, vocab 1000), one prompt of 8 tokens.
Per system: the first call (compiles included), then the median of later calls, as ms and as
tokens/s, and the graphs each call compiled (xla). Eager and xla run in one process, eager first
on its own copy of the model (transformers keeps a static cache on the model between calls).

    .venv/bin/python bench/generate.py --new-tokens 16 --cache static --calls 5
"""
import argparse
import copy
import statistics
import time

import torch


def timed_calls(model, ids, kw, calls, compiles=lambda: 0):
    rows = []
    for _ in range(calls):
        before = compiles()
        start = time.perf_counter()
        out = model.generate(ids, **kw).cpu()
        rows.append(((time.perf_counter() - start) * 1e3, compiles() - before))
    return out, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--new-tokens', type=int, default=16)
    parser.add_argument('--cache', choices=['dynamic', 'static'], default='dynamic')
    parser.add_argument('--calls', type=int, default=5)
    args = parser.parse_args()
    import torch_xla  # noqa: F401
    import torch_xla.debug.metrics as met
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=1000, n_positions=128, n_embd=128, n_layer=2, n_head=4)
    model = GPT2LMHeadModel(cfg).eval()
    device_model = copy.deepcopy(model).to('xla')
    ids = torch.randint(0, 1000, (1, 8))
    kw = dict(max_new_tokens=args.new_tokens, do_sample=False, pad_token_id=0)
    if args.cache == 'static':
        kw['cache_implementation'] = 'static'
    want, eager = timed_calls(model, ids, kw, args.calls)
    got, xla = timed_calls(device_model, ids.to('xla'), kw, args.calls,
                           lambda: met.counter_value('UncachedCompile') or 0)
    assert torch.equal(got, want), 'the device generated other tokens than eager'
    print(f'{args.new_tokens} new tokens, {args.cache} cache, {args.calls} calls')
    print('| system | first call ms | compiles | later calls ms (median) | tokens/s | compiles a later call |')
    print('|---|---:|---:|---:|---:|---:|')
    for name, rows in (('eager', eager), ('xla', xla)):
        later = statistics.median(ms for ms, _ in rows[1:]) if len(rows) > 1 else rows[0][0]
        print(f'| {name} | {rows[0][0]:.1f} | {rows[0][1]} | {later:.1f} | {args.new_tokens / later * 1e3:.0f} | '
              f'{max(c for _, c in rows[1:]) if len(rows) > 1 else "-"} |')


if __name__ == '__main__':
    main()
