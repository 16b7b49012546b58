"""A small GPT-style decoder (token + position embeddings, pre-LayerNorm blocks of causal
self-attention and a GELU MLP, tied output head), as PyTorch/XLA's examples train one. Written
with plain tensor ops so every backend runs the same computation."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class DecoderConfig:
    def __init__(self, vocab=512, dim=128, heads=4, layers=2, seq=64):
        self.vocab, self.dim, self.heads, self.layers, self.seq = vocab, dim, heads, layers, seq


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.proj = nn.Linear(cfg.dim, cfg.dim)
        mask = torch.triu(torch.ones(cfg.seq, cfg.seq, dtype=torch.bool), diagonal=1)
        self.register_buffer('mask', mask, persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        att = att.masked_fill(self.mask[:t, :t], float('-inf')).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.dim), nn.LayerNorm(cfg.dim)
        self.attn = CausalSelfAttention(cfg)
        self.mlp = nn.Sequential(nn.Linear(cfg.dim, 4 * cfg.dim), nn.GELU(), nn.Linear(4 * cfg.dim, cfg.dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Decoder(nn.Module):
    def __init__(self, cfg=None):
        super().__init__()
        cfg = cfg or DecoderConfig()
        self.tok = nn.Embedding(cfg.vocab, cfg.dim)
        self.pos = nn.Parameter(torch.zeros(cfg.seq, cfg.dim))
        self.blocks = nn.Sequential(*[Block(cfg) for _ in range(cfg.layers)])
        self.ln = nn.LayerNorm(cfg.dim)
        nn.init.normal_(self.tok.weight, std=0.02)  # GPT-2's scale: logits start near uniform

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos[:tokens.shape[1]]
        x = self.ln(self.blocks(x))
        return x @ self.tok.weight.t()  # logits [B, T, vocab]


def next_token_loss(logits, tokens):
    """Cross-entropy of predicting token t+1 from the prefix up to t."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
