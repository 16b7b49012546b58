"""`torch_xla.experimental.custom_kernel`: PyTorch/XLA's helpers for its custom kernels.

PyTorch/XLA's kernels in this module (flash attention, paged attention, grouped matmul, ...) are
Pallas programs for TPUs; they have no CPU form and raise here, naming what to use instead. The
shape helpers are plain tensor programs and work on any device."""
import torch

_PALLAS_KERNELS = (
    'flash_attention', 'paged_attention', 'ragged_paged_attention', 'multi_queries_paged_attention',
    'gmm', 'tgmm', 'gmm_backward', 'make_kernel_from_pallas', 'jax_import_guard', 'trace_pallas',
    'FlashAttention', 'flash_attention_non_xla', 'paged_attention_non_xla', 'gmm_non_xla',
)


def repeat_with_fixed_output_size(input: torch.Tensor, repeats: torch.Tensor,
                                  total_repeat_length: int) -> torch.Tensor:
    """`torch.repeat_interleave(input, repeats)` with a static length: truncated to
    `total_repeat_length`, or padded with `input`'s last value up to it. Both arguments are 1-D
    of the same length; the result has a shape known without reading `repeats`, so it traces
    into one graph."""
    if input.dim() != 1 or repeats.dim() != 1:
        raise ValueError(f'repeat_with_fixed_output_size: input and repeats must be 1-D, got '
                         f'{tuple(input.shape)} and {tuple(repeats.shape)}')
    if input.size(0) != repeats.size(0):
        raise ValueError(f'repeat_with_fixed_output_size: input has {input.size(0)} values but '
                         f'repeats has {repeats.size(0)}')
    if input.size(0) == 0:
        raise ValueError('repeat_with_fixed_output_size: input is empty')
    # Output position p holds input[i] for the first i whose running total of repeats passes p:
    # the count of running totals <= p. Past the last total that count is len(input), clamped to
    # the last value.
    ends = torch.cumsum(repeats, dim=0)
    positions = torch.arange(total_repeat_length, device=input.device, dtype=ends.dtype)
    index = (ends.unsqueeze(0) <= positions.unsqueeze(1)).sum(dim=1)
    index = torch.clamp(index, max=input.size(0) - 1)
    return input[index]


def __getattr__(name):
    if name in _PALLAS_KERNELS:
        raise NotImplementedError(
            f'torch_xla.experimental.custom_kernel.{name} is a Pallas kernel for TPUs and has no CPU '
            f'form here; use torch.nn.functional.scaled_dot_product_attention (one fused kernel on '
            f'this device) or plain torch operations')
    raise AttributeError(f"module 'torch_xla.experimental.custom_kernel' has no attribute '{name}'")
