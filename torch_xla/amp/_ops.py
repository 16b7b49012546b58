"""The two ops torch's GradScaler runs, recorded lazily on the xla device instead of through the
CPU fallback (which would read the gradients back to the host every step)."""
import torch

_lib = torch.library.Library('aten', 'IMPL')


def _check_and_unscale(grads, found_inf, inv_scale):
    """Each gradient times inv_scale; found_inf becomes 1 where any gradient has an inf or a nan."""
    bad = found_inf.clone()
    for g in grads:
        bad = torch.maximum(bad, (~torch.isfinite(g)).any().to(bad.dtype))  # broadcast: no view here
        g.mul_(inv_scale.to(g.dtype))
    found_inf.copy_(bad)


def _update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """torch's rule: back off on inf/nan (and restart counting), grow after growth_interval clean
    steps in a row."""
    found = found_inf > 0
    successful = growth_tracker + 1
    grow = successful >= growth_interval
    new_scale = torch.where(found, scale * backoff_factor, torch.where(grow, scale * growth_factor, scale))
    new_tracker = torch.where(found | grow, torch.zeros_like(successful), successful)
    scale.copy_(new_scale)
    growth_tracker.copy_(new_tracker)
    return scale


_lib.impl('_amp_foreach_non_finite_check_and_unscale_', _check_and_unscale, 'XLA')
_lib.impl('_amp_update_scale_', _update_scale, 'XLA')
