"""Models people bring, from the libraries they train them with, in small configs with random
weights (nothing is downloaded), and the way the zoo tests and the benchmark run them.

Each entry builds a model and a batch, and says how to train it: an optimizer, an optional LR
scheduler and gradient clipping, and the loss (the model's own, for `transformers`, with padding
masks and `ignore_index` labels). `train_three_ways` trains eager float64, eager float32 and the
device (float32) from the same start and measures, per step, each float32 run's distance from
float64: the device may not drift more than 10x as far as eager float32 does.
"""
import copy
import dataclasses
from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclasses.dataclass
class ZooModel:
    name: str
    build: Callable[[], nn.Module]
    batch: Callable[[], dict]  # keyword inputs of the model (CPU tensors)
    loss: Callable[[object, dict], torch.Tensor]  # (model output, batch) -> scalar
    optimizer: Callable[[object], torch.optim.Optimizer]
    scheduler: Optional[Callable[[torch.optim.Optimizer], object]] = None
    clip: Optional[float] = None
    steps: int = 4
    train: bool = True  # False: evaluated (forward passes only)


def _hf_loss(out, batch):
    return out.loss


def _adamw(params):
    return torch.optim.AdamW(params, lr=1e-3, eps=1e-6, weight_decay=0.01)


def _sgd(params):
    return torch.optim.SGD(params, lr=0.05, momentum=0.9)


def _warmup(opt):
    return torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 3))


def _token_batch(vocab=1000, batch=4, seq=32, pad_last=6, ignore_every=5, seed=1):
    """Ids, an attention mask whose last sequence ends in padding, and labels = ids with padding
    and every `ignore_every`-th position at -100 (ignore_index)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[-1, seq - pad_last:] = 0
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, ::ignore_every] = -100
    return {'input_ids': ids, 'attention_mask': mask, 'labels': labels}


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(vocab_size=1000, n_positions=128, n_embd=128, n_layer=2, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return ZooModel('gpt2', lambda: GPT2LMHeadModel(cfg), _token_batch, _hf_loss, _adamw,
                    scheduler=_warmup, clip=1.0)


def bert():
    from transformers import BertConfig, BertForMaskedLM
    cfg = BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=256, max_position_embeddings=64, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0)

    def batch():
        b = _token_batch(ignore_every=1)
        b['labels'][:, 3::7] = b['input_ids'][:, 3::7]  # a masked-LM target every 7th token
        return b

    return ZooModel('bert', lambda: BertForMaskedLM(cfg), batch, _hf_loss, _adamw, clip=1.0)


def t5():
    from transformers import T5Config, T5ForConditionalGeneration
    cfg = T5Config(vocab_size=1000, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_heads=4,
                   dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0)

    def batch():
        b = _token_batch(seq=24)
        b['labels'] = _token_batch(seq=16, seed=2)['labels']
        return b

    return ZooModel('t5', lambda: T5ForConditionalGeneration(cfg), batch, _hf_loss, _adamw,
                    scheduler=_warmup)


def llama():
    """A Llama-style decoder: RoPE, grouped-query attention (4 heads, 2 key/value heads), SwiGLU."""
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      attn_implementation='eager')
    return ZooModel('llama', lambda: LlamaForCausalLM(cfg), _token_batch, _hf_loss, _adamw,
                    scheduler=_warmup, clip=1.0)


def whisper():
    """Speech-to-text with the decoder's embedding tied to its output projection (`proj_out`)."""
    from transformers import WhisperConfig, WhisperForConditionalGeneration
    cfg = WhisperConfig(vocab_size=1000, num_mel_bins=16, d_model=64, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                        decoder_ffn_dim=128, max_source_positions=32, max_target_positions=64,
                        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                        decoder_start_token_id=1, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                        suppress_tokens=None, begin_suppress_tokens=None)

    def batch():
        g = torch.Generator().manual_seed(4)
        labels = torch.randint(3, 1000, (4, 12), generator=g)
        labels[-1, 9:] = -100
        return {'input_features': torch.randn(4, 16, 64, generator=g), 'labels': labels}

    return ZooModel('whisper', lambda: WhisperForConditionalGeneration(cfg), batch, _hf_loss, _adamw,
                    scheduler=_warmup, clip=1.0)


class _Denoiser(nn.Module):
    """A diffusers UNet2DConditionModel run through a DDIM scheduler's denoising loop."""

    def __init__(self):
        super().__init__()
        from diffusers import DDIMScheduler, UNet2DConditionModel
        self.unet = UNet2DConditionModel(
            sample_size=16, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
            down_block_types=('CrossAttnDownBlock2D', 'DownBlock2D'), up_block_types=('UpBlock2D', 'CrossAttnUpBlock2D'),
            cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8)
        self.scheduler = DDIMScheduler(num_train_timesteps=1000)
        self.scheduler.set_timesteps(4)

    def forward(self, latents, text):
        for t in self.scheduler.timesteps:
            noise = self.unet(latents, t, encoder_hidden_states=text).sample
            latents = self.scheduler.step(noise, t, latents).prev_sample
        return latents


def unet():
    def batch():
        g = torch.Generator().manual_seed(5)
        return {'latents': torch.randn(2, 4, 16, 16, generator=g), 'text': torch.randn(2, 8, 32, generator=g)}

    return ZooModel('unet_ddim', _Denoiser, batch, lambda out, b: out.square().mean(), _adamw, steps=2, train=False)


def _image_batch(shape, classes=10, seed=3):
    g = torch.Generator().manual_seed(seed)
    return {'x': torch.randn(*shape, generator=g), 'y': torch.randint(0, classes, (shape[0],), generator=g)}


def _image_model(module_factory):
    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = module_factory()

        def forward(self, x, y):
            return self.net(x)
    return Classifier


def _cross_entropy(out, batch):
    return F.cross_entropy(out, batch['y'])


def vit():
    import timm
    build = _image_model(lambda: timm.create_model(
        'vit_tiny_patch16_224', pretrained=False, img_size=32, patch_size=8, num_classes=10))
    return ZooModel('vit', build, lambda: _image_batch((8, 3, 32, 32)), _cross_entropy, _adamw, clip=1.0)


def convnext():
    import timm
    build = _image_model(lambda: timm.create_model('convnext_atto', pretrained=False, num_classes=10))
    return ZooModel('convnext', build, lambda: _image_batch((4, 3, 64, 64)), _cross_entropy, _adamw)


def resnet18():
    import torchvision
    build = _image_model(lambda: torchvision.models.resnet18(num_classes=10))
    return ZooModel('resnet18', build, lambda: _image_batch((8, 3, 64, 64)), _cross_entropy, _sgd, steps=5)


def mobilenet():
    import torchvision
    build = _image_model(lambda: torchvision.models.mobilenet_v3_small(num_classes=10, dropout=0.0))
    return ZooModel('mobilenet_v3', build, lambda: _image_batch((8, 3, 64, 64)), _cross_entropy, _sgd)


class _Recurrent(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(32, 128, num_layers=2, batch_first=True)
        self.head = nn.Linear(128, 10)

    def forward(self, x, y):
        return self.head(self.rnn(x)[0][:, -1])


def lstm():
    return ZooModel('lstm', lambda: _Recurrent(nn.LSTM), lambda: _image_batch((8, 32, 32)),
                    _cross_entropy, _adamw, clip=1.0, steps=3)


def gru():
    return ZooModel('gru', lambda: _Recurrent(nn.GRU), lambda: _image_batch((8, 32, 32)),
                    _cross_entropy, _adamw, clip=1.0, steps=3)


ZOO = {z.__name__: z for z in (gpt2, bert, t5, llama, whisper, unet, vit, convnext, resnet18, mobilenet, lstm, gru)}


# ----- training three ways -----

def _to(batch, device=None, dtype=None):
    out = {}
    for k, v in batch.items():
        if dtype is not None and v.is_floating_point():
            v = v.to(dtype)
        out[k] = v.to(device) if device is not None else v
    return out


def _relative_deviation(got, want):
    """The largest difference of `got` from `want`, relative to `want`'s largest magnitude, or to
    1e-3 where that is smaller: a tensor whose exact gradient is zero (attention's key bias, under
    softmax's shift invariance) stays at 1e-18 in float64 and gathers 1e-9 of rounding noise in
    float32, which relative to its own size would read as a deviation of 1e9."""
    want = want.detach().double()
    return ((got.detach().cpu().double() - want).abs().max() / want.abs().max().clamp_min(1e-3)).item()


def _deviation(model, reference):
    """The largest relative deviation of any parameter or floating buffer from the reference's."""
    ref = dict(reference.named_parameters())
    ref.update(reference.named_buffers())
    return max((_relative_deviation(p, ref[name])
                for name, p in list(model.named_parameters()) + list(model.named_buffers())
                if p.is_floating_point()), default=0.0)


def _step(zoo, model, optimizer, scheduler, batch):
    """One step; the loss, and for an evaluated model its output too."""
    if not zoo.train:
        with torch.no_grad():
            out = model(**batch)
            return zoo.loss(out, batch), out
    optimizer.zero_grad()
    loss = zoo.loss(model(**batch), batch)
    loss.backward()
    if zoo.clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), zoo.clip)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss, None


def _device_counters():
    import torch_xla.debug.metrics as met
    return {name: met.counter_value(name) or 0 for name in met.counter_names()}


def train_three_ways(zoo, seed=0):
    """Per step: losses, eager float32's and the device's parameter deviation from float64 (output
    deviation, for an evaluated model; a trained one ends with an evaluation whose entry compares
    its loss), and the device's new compilations and graph runs on the interpreter. Also the CPU
    fallbacks (aten ops) and the ops without a lowering the device met over all steps."""
    import torch_xla.core.xla_model as xm
    torch.manual_seed(seed)
    base = zoo.build()
    batch = zoo.batch()
    dev = xm.xla_device()
    models = {'f64': copy.deepcopy(base).double(), 'f32': copy.deepcopy(base), 'xla': copy.deepcopy(base).to(dev)}
    batches = {'f64': _to(batch, dtype=torch.float64), 'f32': batch, 'xla': _to(batch, dev)}
    for m in models.values():
        m.train(zoo.train)
    optimizers = {k: zoo.optimizer(m.parameters()) for k, m in models.items()}
    schedulers = {k: zoo.scheduler(o) if zoo.scheduler else None for k, o in optimizers.items()}
    xm.mark_step()
    start = _device_counters()
    history = []
    for _ in range(zoo.steps):
        losses, outputs = {}, {}
        before = _device_counters()
        for k in ('f64', 'f32', 'xla'):
            loss, outputs[k] = _step(zoo, models[k], optimizers[k], schedulers[k], batches[k])
            if k == 'xla':
                xm.mark_step()
            losses[k] = loss.item()
        after = _device_counters()
        if zoo.train:
            deviation = {k: _deviation(models[k], models['f64']) for k in ('f32', 'xla')}
        else:
            deviation = {k: _relative_deviation(outputs[k], outputs['f64']) for k in ('f32', 'xla')}
        history.append({
            'losses': losses,
            **deviation,
            'compiles': after.get('UncachedCompile', 0) - before.get('UncachedCompile', 0),
            'interpreted': after.get('InterpretedExecution', 0) - before.get('InterpretedExecution', 0),
        })
    if zoo.train:
        # The trained model evaluated (dropout and batch norm in eval mode): its loss.
        losses = {}
        for k in ('f64', 'f32', 'xla'):
            models[k].eval()
            with torch.no_grad():
                losses[k] = zoo.loss(models[k](**batches[k]), batches[k]).item()
        history.append({'losses': losses, 'eval': True,
                        **{k: abs(losses[k] - losses['f64']) / max(abs(losses['f64']), 1e-3) for k in ('f32', 'xla')},
                        'compiles': 0, 'interpreted': 0})
    end = _device_counters()
    # PyTorch/XLA counts reads of a value into Python (the loss's .item()) as aten::_local_scalar_dense
    # among its CPU fallbacks; they are reads, not ops run on the CPU.
    fallbacks = sorted(name for name, value in end.items()
                       if name.startswith('aten::') and name != 'aten::_local_scalar_dense'
                       and value > start.get(name, 0))
    not_lowered = sorted(name for name, value in end.items()
                         if (name.startswith('NoLowering:') or name.startswith('LoweringError:'))
                         and value > start.get(name, 0))
    return history, fallbacks, not_lowered


def within_ten_times_eager(history, floor=1e-6):
    """The steps (index, device deviation, eager float32 deviation) where the device drifted from
    float64 more than 10x as far as eager float32 (plus `floor`, where eager is exact)."""
    return [(i, h['xla'], h['f32']) for i, h in enumerate(history) if h['xla'] > 10 * h['f32'] + floor]
