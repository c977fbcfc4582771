"""Time LLM steps of named implementations (impls/*.yaml) on random-weight models from configs:

- hf-static: Hugging Face transformers (attn_implementation "sdpa"), StaticCache, the decode step
  captured in a CUDA graph and replayed (``max_cache_len`` = context + --slack unless a case says);
- hf-dynamic: the same model, DynamicCache, one token at a time from Python (what generate() does);
- hf prefill: ``model(input_ids)`` of a batch of prompts, eager, the same shape every time;
- fused: fused_model.py (QKV and gate-up GEMMs, Triton add+RMSNorm, rotary+cache write and
  SiLU*up, SDPA flash), decode replayed from a CUDA graph, and prefill.

For each case: every timed step (CUDA events around each graph replay; wall time with a CUDA
synchronise around each eager step), their median, and with --trace one step's profiler trace of
the first shape of each implementation, model and phase (a graph's kernels traced from an eager
step of the same code).

    python3 impl_bench.py --out DIR --set dev|holdout [--models a,b] [--impls hf-static,...] [--trace]

Writes DIR/times.json after every case (versions, device, driver, date, command) and
DIR/traces/*.json.gz.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import torch

from benchlib import capture, run_header
from trace_capture import sync_time, trace_one

# model_type, config; none of them is a preset of roofcalc's models/llm.yaml except where named
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "llama-1b": (
        "llama",
        dict(
            hidden_size=2048,
            intermediate_size=8192,
            num_hidden_layers=16,
            num_attention_heads=32,
            num_key_value_heads=8,
            vocab_size=128256,
            tie_word_embeddings=True,
            rope_theta=500000.0,
            max_position_embeddings=131072,
            head_dim=64,
        ),
    ),
    "qwen2-0.5b": (
        "qwen2",
        dict(
            hidden_size=896,
            intermediate_size=4864,
            num_hidden_layers=24,
            num_attention_heads=14,
            num_key_value_heads=2,
            vocab_size=151936,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
        ),
    ),
    "qwen3-0.6b": (
        "qwen3",
        dict(
            hidden_size=1024,
            intermediate_size=3072,
            num_hidden_layers=28,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=151936,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            max_position_embeddings=40960,
        ),
    ),
    "phi3-mini": (
        "phi3",
        dict(
            hidden_size=3072,
            intermediate_size=8192,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=32,
            vocab_size=32064,
            tie_word_embeddings=False,
            max_position_embeddings=4096,
            original_max_position_embeddings=4096,
            sliding_window=None,
            pad_token_id=0,
        ),
    ),
    "nemo-16l": (
        "mistral",
        dict(
            hidden_size=5120,
            intermediate_size=14336,
            num_hidden_layers=16,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=131072,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            max_position_embeddings=131072,
            sliding_window=None,
        ),
    ),
    # hold-out architectures
    "llama-8b": (
        "llama",
        dict(
            hidden_size=4096,
            intermediate_size=14336,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=8,
            vocab_size=128256,
            tie_word_embeddings=False,
            rope_theta=500000.0,
            max_position_embeddings=131072,
        ),
    ),
    "qwen2-1.5b": (
        "qwen2",
        dict(
            hidden_size=1536,
            intermediate_size=8960,
            num_hidden_layers=28,
            num_attention_heads=12,
            num_key_value_heads=2,
            vocab_size=151936,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
        ),
    ),
    "qwen3-4b": (
        "qwen3",
        dict(
            hidden_size=2560,
            intermediate_size=9728,
            num_hidden_layers=36,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=151936,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            max_position_embeddings=40960,
        ),
    ),
    "phi3-small-gqa": (
        "phi3",
        dict(
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=24,
            num_attention_heads=16,
            num_key_value_heads=4,
            vocab_size=32064,
            tie_word_embeddings=False,
            max_position_embeddings=16384,
            original_max_position_embeddings=16384,
            sliding_window=None,
            pad_token_id=0,
        ),
    ),
    # hold-out 2 architectures
    "llama-3b": (
        "llama",
        dict(
            hidden_size=3072,
            intermediate_size=8192,
            num_hidden_layers=28,
            num_attention_heads=24,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=128256,
            tie_word_embeddings=True,
            rope_theta=500000.0,
            max_position_embeddings=131072,
        ),
    ),
    "qwen2-7b": (
        "qwen2",
        dict(
            hidden_size=3584,
            intermediate_size=18944,
            num_hidden_layers=28,
            num_attention_heads=28,
            num_key_value_heads=4,
            vocab_size=152064,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
        ),
    ),
    "qwen3-1.7b": (
        "qwen3",
        dict(
            hidden_size=2048,
            intermediate_size=6144,
            num_hidden_layers=28,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=151936,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            max_position_embeddings=40960,
        ),
    ),
    "phi3-medium-20l": (
        "phi3",
        dict(
            hidden_size=5120,
            intermediate_size=17920,
            num_hidden_layers=20,
            num_attention_heads=40,
            num_key_value_heads=10,
            vocab_size=32064,
            tie_word_embeddings=False,
            max_position_embeddings=4096,
            original_max_position_embeddings=4096,
            sliding_window=None,
            pad_token_id=0,
        ),
    ),
    "nemo-12b": (
        "mistral",
        dict(
            hidden_size=5120,
            intermediate_size=14336,
            num_hidden_layers=40,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=131072,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            max_position_embeddings=131072,
            sliding_window=None,
        ),
    ),
    # hold-out 3 architectures
    "llama-2b-wide": (
        "llama",
        dict(
            hidden_size=2560,
            intermediate_size=6912,
            num_hidden_layers=24,
            num_attention_heads=20,
            num_key_value_heads=4,
            head_dim=128,
            vocab_size=128256,
            tie_word_embeddings=True,
            rope_theta=500000.0,
            max_position_embeddings=131072,
        ),
    ),
    "qwen2-3b": (
        "qwen2",
        dict(
            hidden_size=2048,
            intermediate_size=11008,
            num_hidden_layers=36,
            num_attention_heads=16,
            num_key_value_heads=2,
            vocab_size=151936,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
        ),
    ),
    "qwen3-8b-20l": (
        "qwen3",
        dict(
            hidden_size=4096,
            intermediate_size=12288,
            num_hidden_layers=20,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=151936,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            max_position_embeddings=40960,
        ),
    ),
    "phi3-gqa-128": (
        "phi3",
        dict(
            hidden_size=3072,
            intermediate_size=8192,
            num_hidden_layers=32,
            num_attention_heads=24,
            num_key_value_heads=8,
            vocab_size=32064,
            tie_word_embeddings=False,
            max_position_embeddings=8192,
            original_max_position_embeddings=8192,
            sliding_window=None,
            pad_token_id=0,
        ),
    ),
    "mistral-20l": (
        "mistral",
        dict(
            hidden_size=5120,
            intermediate_size=14336,
            num_hidden_layers=20,
            num_attention_heads=40,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=32768,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
            sliding_window=None,
        ),
    ),
    # hold-out 5 architectures
    "llama-1b-deep": (
        "llama",
        dict(
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=22,
            num_attention_heads=32,
            num_key_value_heads=4,
            vocab_size=32000,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            max_position_embeddings=8192,
        ),
    ),
    "qwen2-1b-narrow": (
        "qwen2",
        dict(
            hidden_size=1792,
            intermediate_size=9472,
            num_hidden_layers=20,
            num_attention_heads=14,
            num_key_value_heads=2,
            vocab_size=151936,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
        ),
    ),
    "qwen3-2b-wide": (
        "qwen3",
        dict(
            hidden_size=2560,
            intermediate_size=7680,
            num_hidden_layers=24,
            num_attention_heads=20,
            num_key_value_heads=4,
            head_dim=128,
            vocab_size=151936,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            max_position_embeddings=40960,
        ),
    ),
    "mistral-4b": (
        "mistral",
        dict(
            hidden_size=3072,
            intermediate_size=9216,
            num_hidden_layers=24,
            num_attention_heads=24,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=32768,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
            sliding_window=None,
        ),
    ),
    "phi3-mini-12l": (
        "phi3",
        dict(
            hidden_size=3072,
            intermediate_size=8192,
            num_hidden_layers=12,
            num_attention_heads=32,
            num_key_value_heads=32,
            vocab_size=32064,
            tie_word_embeddings=False,
            max_position_embeddings=4096,
            original_max_position_embeddings=4096,
            sliding_window=None,
            pad_token_id=0,
        ),
    ),
    # hold-out 6 architectures (graph decode traced at one shape, for the trace predictor)
    "llama-3b-gqa2": ("llama", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=20, num_attention_heads=24,
                                    num_key_value_heads=2, head_dim=128, vocab_size=128256, tie_word_embeddings=True,
                                    rope_theta=500000.0, max_position_embeddings=131072)),
    "mistral-6b-30l": ("mistral", dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=30,
                                       num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=32768,
                                       tie_word_embeddings=False, rope_theta=1000000.0, max_position_embeddings=32768,
                                       sliding_window=None)),
    "qwen2-2b-24l": ("qwen2", dict(hidden_size=2048, intermediate_size=5504, num_hidden_layers=24, num_attention_heads=16,
                                   num_key_value_heads=4, vocab_size=151936, tie_word_embeddings=True,
                                   rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-1b-deep": ("qwen3", dict(hidden_size=1536, intermediate_size=4608, num_hidden_layers=32, num_attention_heads=12,
                                    num_key_value_heads=4, head_dim=128, vocab_size=151936, tie_word_embeddings=True,
                                    rope_theta=1000000.0, max_position_embeddings=40960)),
    "phi3-2b-gqa": ("phi3", dict(hidden_size=2560, intermediate_size=6912, num_hidden_layers=20, num_attention_heads=20,
                                 num_key_value_heads=4, vocab_size=32064, tie_word_embeddings=False,
                                 max_position_embeddings=8192, original_max_position_embeddings=8192,
                                 sliding_window=None, pad_token_id=0)),
    # Phi-3 layouts not measured before (the hold-out of the rotary pass-through cat, HOLDOUT.md)
    "phi3-1b-mha": ("phi3", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=14, num_attention_heads=16,
                                 num_key_value_heads=16, vocab_size=32064, tie_word_embeddings=False,
                                 max_position_embeddings=8192, original_max_position_embeddings=8192,
                                 sliding_window=None, pad_token_id=0)),
    "phi3-3b-gqa8": ("phi3", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=18, num_attention_heads=24,
                                  num_key_value_heads=8, vocab_size=32064, tie_word_embeddings=False,
                                  max_position_embeddings=8192, original_max_position_embeddings=8192,
                                  sliding_window=None, pad_token_id=0)),
    "phi3-4b-40l": ("phi3", dict(hidden_size=2560, intermediate_size=7168, num_hidden_layers=40, num_attention_heads=32,
                                 num_key_value_heads=8, vocab_size=32064, tie_word_embeddings=False,
                                 max_position_embeddings=8192, original_max_position_embeddings=8192,
                                 sliding_window=None, pad_token_id=0)),
    # impl-holdout8 (HOLDOUT.md): five layouts never run before, every implementation, one GPU
    "llama-2b-kv6": ("llama", dict(hidden_size=2304, intermediate_size=6144, num_hidden_layers=22, num_attention_heads=18,
                                   num_key_value_heads=6, head_dim=128, vocab_size=128256, tie_word_embeddings=True,
                                   rope_theta=500000.0, max_position_embeddings=131072)),
    "qwen3-3b-qk": ("qwen3", dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=24, num_attention_heads=32,
                                  num_key_value_heads=8, head_dim=128, vocab_size=151936, tie_word_embeddings=True,
                                  rope_theta=1000000.0, max_position_embeddings=40960)),
    "qwen2-1b-kv2": ("qwen2", dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=20, num_attention_heads=12,
                                   num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True,
                                   rope_theta=1000000.0, max_position_embeddings=32768)),
    "mistral-hd128-20l": ("mistral", dict(hidden_size=2560, intermediate_size=7168, num_hidden_layers=20,
                                          num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=32768,
                                          tie_word_embeddings=False, rope_theta=1000000.0,
                                          max_position_embeddings=32768, sliding_window=None)),
    "phi3-2b-h40": ("phi3", dict(hidden_size=2560, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=40,
                                 num_key_value_heads=10, vocab_size=32064, tie_word_embeddings=False,
                                 max_position_embeddings=16384, original_max_position_embeddings=16384,
                                 sliding_window=None, pad_token_id=0)),
    # impl-holdout9 (HOLDOUT.md): five layouts never run, every implementation, one GPU; drawn in
    # the eleventh session before any change it tests
    "qwen2-2b-kv2b": ("qwen2", dict(hidden_size=2048, intermediate_size=11008, num_hidden_layers=18, num_attention_heads=16,
                                    num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True,
                                    rope_theta=1000000.0, max_position_embeddings=32768)),
    "llama-1b-hd64": ("llama", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=32,
                                    num_key_value_heads=4, head_dim=64, vocab_size=32000, tie_word_embeddings=False,
                                    rope_theta=10000.0, max_position_embeddings=16384)),
    "qwen3-1b-kv4": ("qwen3", dict(hidden_size=1536, intermediate_size=6144, num_hidden_layers=20, num_attention_heads=16,
                                   num_key_value_heads=4, head_dim=128, vocab_size=151936, tie_word_embeddings=True,
                                   rope_theta=1000000.0, max_position_embeddings=40960)),
    "mistral-3b-kv4": ("mistral", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=18,
                                       num_attention_heads=24, num_key_value_heads=4, head_dim=128, vocab_size=32768,
                                       tie_word_embeddings=False, rope_theta=1000000.0,
                                       max_position_embeddings=32768, sliding_window=None)),
    "phi3-1b-kv4": ("phi3", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=16, num_attention_heads=16,
                                 num_key_value_heads=4, vocab_size=32064, tie_word_embeddings=False,
                                 max_position_embeddings=16384, original_max_position_embeddings=16384,
                                 sliding_window=None, pad_token_id=0)),
    # impl-holdout10 (HOLDOUT.md): three layouts never run, on an H200, drawn in the eleventh
    # session after its last change to the implementations
    "qwen2-1b-h14kv2": ("qwen2", dict(hidden_size=1792, intermediate_size=9472, num_hidden_layers=20, num_attention_heads=14,
                                      num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True,
                                      rope_theta=1000000.0, max_position_embeddings=32768)),
    "llama-2b-h40hd64": ("llama", dict(hidden_size=2560, intermediate_size=6912, num_hidden_layers=18, num_attention_heads=40,
                                       num_key_value_heads=8, head_dim=64, vocab_size=128256, tie_word_embeddings=True,
                                       rope_theta=500000.0, max_position_embeddings=131072)),
    "mistral-2b-kv2": ("mistral", dict(hidden_size=2048, intermediate_size=7168, num_hidden_layers=22,
                                       num_attention_heads=16, num_key_value_heads=2, head_dim=128, vocab_size=32768,
                                       tie_word_embeddings=False, rope_theta=1000000.0,
                                       max_position_embeddings=32768, sliding_window=None)),
    # impl-holdout11 (HOLDOUT.md): four layouts never run, drawn in the twelfth session before the
    # implementation's own host time per layer (host_layer_s) entered the model
    "llama-1b-kv2-20l": ("llama", dict(hidden_size=2048, intermediate_size=5504, num_hidden_layers=20,
                                       num_attention_heads=16, num_key_value_heads=2, vocab_size=64000,
                                       tie_word_embeddings=False, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-3b-h24-16l": ("mistral", dict(hidden_size=3072, intermediate_size=9216, num_hidden_layers=16,
                                           num_attention_heads=24, num_key_value_heads=8, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen3-2b-kv8": ("qwen3", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=24, num_attention_heads=16,
                                   num_key_value_heads=8, head_dim=128, vocab_size=151936, tie_word_embeddings=True,
                                   rope_theta=1000000.0, max_position_embeddings=40960)),
    "phi3-2b-kv4-18l": ("phi3", dict(hidden_size=2560, intermediate_size=6912, num_hidden_layers=18,
                                     num_attention_heads=20, num_key_value_heads=4, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    # impl-holdout12 (HOLDOUT.md): five layouts never run, drawn in the twelfth session after
    # impl-holdout11 led to building and warming the tiny models before any timing
    "llama-2b-kv4-18l": ("llama", dict(hidden_size=2304, intermediate_size=6144, num_hidden_layers=18,
                                       num_attention_heads=18, num_key_value_heads=6, vocab_size=49152,
                                       tie_word_embeddings=True, rope_theta=100000.0, max_position_embeddings=16384)),
    "mistral-2b-h32hd64": ("mistral", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=20,
                                           num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-1b-kv2-24l": ("qwen2", dict(hidden_size=1536, intermediate_size=7168, num_hidden_layers=24,
                                       num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-1b-kv2-28l": ("qwen3", dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                                       num_attention_heads=16, num_key_value_heads=2, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-1b-kv8-20l": ("phi3", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=20,
                                     num_attention_heads=16, num_key_value_heads=8, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    # impl-holdout13 (HOLDOUT.md): four layouts never run, drawn in the twelfth session after its
    # mends of --host-layer
    "llama-1b-kv8-24l": ("llama", dict(hidden_size=2048, intermediate_size=5120, num_hidden_layers=24,
                                       num_attention_heads=16, num_key_value_heads=8, vocab_size=50304,
                                       tie_word_embeddings=False, rope_theta=10000.0, max_position_embeddings=16384)),
    "mistral-1b-kv4-26l": ("mistral", dict(hidden_size=1536, intermediate_size=4608, num_hidden_layers=26,
                                           num_attention_heads=12, num_key_value_heads=4, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-2b-kv4-20l": ("qwen2", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=20,
                                       num_attention_heads=16, num_key_value_heads=4, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-2b-kv4-20l": ("qwen3", dict(hidden_size=2560, intermediate_size=7168, num_hidden_layers=20,
                                       num_attention_heads=20, num_key_value_heads=4, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    # impl-holdout14 (HOLDOUT.md): four layouts never run, drawn after host_ops_native
    "llama-2b-kv2-22l": ("llama", dict(hidden_size=2560, intermediate_size=6912, num_hidden_layers=22,
                                       num_attention_heads=20, num_key_value_heads=2, vocab_size=32000,
                                       tie_word_embeddings=False, rope_theta=10000.0, max_position_embeddings=16384)),
    "mistral-2b-kv6-18l": ("mistral", dict(hidden_size=2304, intermediate_size=6912, num_hidden_layers=18,
                                           num_attention_heads=18, num_key_value_heads=6, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-1b-kv2-28l": ("qwen2", dict(hidden_size=1280, intermediate_size=5120, num_hidden_layers=28,
                                       num_attention_heads=10, num_key_value_heads=2, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "phi3-2b-kv8-16l": ("phi3", dict(hidden_size=2560, intermediate_size=7680, num_hidden_layers=16,
                                     num_attention_heads=32, num_key_value_heads=8, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    # impl-holdout15 (HOLDOUT.md): four layouts never run, drawn after the session's last model change
    "llama-1b-kv4-20l": ("llama", dict(hidden_size=1792, intermediate_size=4864, num_hidden_layers=20,
                                       num_attention_heads=14, num_key_value_heads=2, vocab_size=32000,
                                       tie_word_embeddings=False, rope_theta=10000.0, max_position_embeddings=16384)),
    "mistral-3b-kv4-20l": ("mistral", dict(hidden_size=2560, intermediate_size=8192, num_hidden_layers=20,
                                           num_attention_heads=20, num_key_value_heads=4, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen3-1b-kv8-24l": ("qwen3", dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=24,
                                       num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-1b-kv4-22l": ("phi3", dict(hidden_size=1536, intermediate_size=6144, num_hidden_layers=22,
                                     num_attention_heads=12, num_key_value_heads=4, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    # impl-holdout16 (HOLDOUT.md): four layouts never run, drawn in the thirteenth session with the
    # host time per layer timed under torch.no_grad() (host_layer_s)
    "llama-2b-kv6-16l": ("llama", dict(hidden_size=2304, intermediate_size=6144, num_hidden_layers=16,
                                       num_attention_heads=18, num_key_value_heads=6, head_dim=128, vocab_size=49152,
                                       tie_word_embeddings=True, rope_theta=100000.0, max_position_embeddings=16384)),
    "mistral-1b-kv2-24l": ("mistral", dict(hidden_size=1792, intermediate_size=5120, num_hidden_layers=24,
                                           num_attention_heads=14, num_key_value_heads=2, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen3-1b-kv2-18l": ("qwen3", dict(hidden_size=1280, intermediate_size=4608, num_hidden_layers=18,
                                       num_attention_heads=10, num_key_value_heads=2, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-2b-kv10-20l": ("phi3", dict(hidden_size=2560, intermediate_size=7680, num_hidden_layers=20,
                                      num_attention_heads=20, num_key_value_heads=10, vocab_size=32064,
                                      tie_word_embeddings=False, max_position_embeddings=16384,
                                      original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    # impl-holdout17 (HOLDOUT.md): five layouts never run, drawn in the thirteenth session after
    # impl-holdout16's evaluation, with no change between
    "llama-3b-kv4-14l": ("llama", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=14,
                                       num_attention_heads=24, num_key_value_heads=4, head_dim=128, vocab_size=128256,
                                       tie_word_embeddings=True, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-2b-kv8-20l": ("mistral", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=20,
                                           num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-2b-kv6-20l": ("qwen2", dict(hidden_size=2304, intermediate_size=8192, num_hidden_layers=20,
                                       num_attention_heads=18, num_key_value_heads=6, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-2b-kv4-16l": ("qwen3", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                                       num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-1b-kv6-24l": ("phi3", dict(hidden_size=1536, intermediate_size=5120, num_hidden_layers=24,
                                     num_attention_heads=12, num_key_value_heads=6, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    # impl-holdout18 (HOLDOUT.md): four layouts never run, drawn in the thirteenth session with
    # --cudnn-plans-cached (each DynamicCache decode case timed again, its plans cached)
    "llama-2b-kv2-18l": ("llama", dict(hidden_size=2048, intermediate_size=7168, num_hidden_layers=18,
                                       num_attention_heads=16, num_key_value_heads=2, head_dim=128, vocab_size=100352,
                                       tie_word_embeddings=False, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-3b-kv8-18l": ("mistral", dict(hidden_size=3072, intermediate_size=8704, num_hidden_layers=18,
                                           num_attention_heads=24, num_key_value_heads=8, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen3-2b-kv6-18l": ("qwen3", dict(hidden_size=2304, intermediate_size=7168, num_hidden_layers=18,
                                       num_attention_heads=18, num_key_value_heads=6, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-3b-kv8-18l": ("phi3", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=18,
                                     num_attention_heads=24, num_key_value_heads=8, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    # impl-holdout19 (HOLDOUT.md): four layouts never run, drawn in the thirteenth session after
    # impl-holdout18's evaluation and its mends
    "llama-1b-kv8-20l": ("llama", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=20,
                                       num_attention_heads=16, num_key_value_heads=8, head_dim=128, vocab_size=64256,
                                       tie_word_embeddings=True, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-2b-kv6-22l": ("mistral", dict(hidden_size=2304, intermediate_size=6656, num_hidden_layers=22,
                                           num_attention_heads=18, num_key_value_heads=6, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-1b-kv4-24l": ("qwen2", dict(hidden_size=1536, intermediate_size=6144, num_hidden_layers=24,
                                       num_attention_heads=12, num_key_value_heads=4, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "phi3-2b-kv4-20l": ("phi3", dict(hidden_size=2048, intermediate_size=7168, num_hidden_layers=20,
                                     num_attention_heads=16, num_key_value_heads=4, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    # impl-holdout20 (HOLDOUT.md): seven layouts never run, drawn in the fourteenth session with
    # random.Random("roofcalc impl-holdout20 2026-11-28") (five families) and "... extra" (a llama
    # and a mistral more, for the fused layout): hidden from 1,536-3,072, heads of 128, KV heads a
    # divisor, 14-26 layers, the MLP 2.5-3.6x rounded to 256
    "llama-1b-kv4-14l": ("llama", dict(hidden_size=1536, intermediate_size=5120, num_hidden_layers=14,
                                       num_attention_heads=12, num_key_value_heads=4, head_dim=128, vocab_size=128256,
                                       tie_word_embeddings=False, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-3b-kv2-25l": ("mistral", dict(hidden_size=3072, intermediate_size=8960, num_hidden_layers=25,
                                           num_attention_heads=24, num_key_value_heads=2, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-3b-kv6-18l": ("qwen2", dict(hidden_size=3072, intermediate_size=10752, num_hidden_layers=18,
                                       num_attention_heads=24, num_key_value_heads=6, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-3b-kv8-22l": ("qwen3", dict(hidden_size=3072, intermediate_size=9728, num_hidden_layers=22,
                                       num_attention_heads=24, num_key_value_heads=8, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-3b-kv8-18l-f9728": ("phi3", dict(hidden_size=3072, intermediate_size=9728, num_hidden_layers=18,
                                           num_attention_heads=24, num_key_value_heads=8, vocab_size=32064,
                                           tie_word_embeddings=False, max_position_embeddings=16384,
                                           original_max_position_embeddings=16384, sliding_window=None,
                                           pad_token_id=0)),
    "llama-2b-kv2-20l": ("llama", dict(hidden_size=2304, intermediate_size=6144, num_hidden_layers=20,
                                       num_attention_heads=18, num_key_value_heads=2, head_dim=128, vocab_size=32000,
                                       tie_word_embeddings=False, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-2b-kv1-21l": ("mistral", dict(hidden_size=2560, intermediate_size=7680, num_hidden_layers=21,
                                           num_attention_heads=20, num_key_value_heads=1, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    # impl-holdout21 (HOLDOUT.md): seven layouts never run, drawn in the fifteenth session with
    # draw_holdout21.py (draw_holdout20's generator, seed "roofcalc impl-holdout21 2026-11-28")
    "llama-3b-kv1-21l": ("llama", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=21,
                                       num_attention_heads=24, num_key_value_heads=1, head_dim=128, vocab_size=128256,
                                       tie_word_embeddings=True, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-2b-kv3-20l": ("mistral", dict(hidden_size=2304, intermediate_size=7936, num_hidden_layers=20,
                                           num_attention_heads=18, num_key_value_heads=3, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-2b-kv3-23l": ("qwen2", dict(hidden_size=2304, intermediate_size=8192, num_hidden_layers=23,
                                       num_attention_heads=18, num_key_value_heads=3, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-1b-kv4-26l": ("qwen3", dict(hidden_size=1536, intermediate_size=4608, num_hidden_layers=26,
                                       num_attention_heads=12, num_key_value_heads=4, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-2b-kv6-22l": ("phi3", dict(hidden_size=2304, intermediate_size=7424, num_hidden_layers=22,
                                     num_attention_heads=18, num_key_value_heads=6, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    "llama-2b-kv8-24l": ("llama", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=24,
                                       num_attention_heads=16, num_key_value_heads=8, head_dim=128, vocab_size=128256,
                                       tie_word_embeddings=True, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-3b-kv1-17l": ("mistral", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=17,
                                           num_attention_heads=24, num_key_value_heads=1, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    # impl-holdout22 (HOLDOUT.md): seven layouts never run, drawn in the sixteenth session with
    # draw_holdout22.py (draw_holdout20's generator, seed "roofcalc impl-holdout22 2026-11-28")
    "llama-1b-kv2-22l": ("llama", dict(hidden_size=1792, intermediate_size=4608, num_hidden_layers=22,
                                       num_attention_heads=14, num_key_value_heads=2, head_dim=128, vocab_size=100352,
                                       tie_word_embeddings=False, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-3b-kv3-26l": ("mistral", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=26,
                                           num_attention_heads=24, num_key_value_heads=3, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-3b-kv1-25l": ("qwen2", dict(hidden_size=3072, intermediate_size=9472, num_hidden_layers=25,
                                       num_attention_heads=24, num_key_value_heads=1, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-1b-kv4-26l-f5376": ("qwen3", dict(hidden_size=1536, intermediate_size=5376, num_hidden_layers=26,
                                             num_attention_heads=12, num_key_value_heads=4, head_dim=128,
                                             vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                             max_position_embeddings=40960)),
    "phi3-1b-kv2-22l": ("phi3", dict(hidden_size=1536, intermediate_size=5376, num_hidden_layers=22,
                                     num_attention_heads=12, num_key_value_heads=2, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    "llama-2b-kv3-20l": ("llama", dict(hidden_size=2304, intermediate_size=7168, num_hidden_layers=20,
                                       num_attention_heads=18, num_key_value_heads=3, head_dim=128, vocab_size=128256,
                                       tie_word_embeddings=False, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-1b-kv2-21l": ("mistral", dict(hidden_size=1792, intermediate_size=5888, num_hidden_layers=21,
                                           num_attention_heads=14, num_key_value_heads=2, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    # impl-holdout23 (HOLDOUT.md): seven layouts never run, drawn in the sixteenth session with
    # draw_holdout23.py (draw_holdout20's generator, seed "roofcalc impl-holdout23 2026-11-28")
    "llama-3b-kv1-19l": ("llama", dict(hidden_size=3072, intermediate_size=11008, num_hidden_layers=19,
                                       num_attention_heads=24, num_key_value_heads=1, head_dim=128, vocab_size=64256,
                                       tie_word_embeddings=False, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-2b-kv4-18l": ("mistral", dict(hidden_size=2048, intermediate_size=5120, num_hidden_layers=18,
                                           num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-1b-kv3-25l": ("qwen2", dict(hidden_size=1536, intermediate_size=5120, num_hidden_layers=25,
                                       num_attention_heads=12, num_key_value_heads=3, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-1b-kv2-15l": ("qwen3", dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=15,
                                       num_attention_heads=12, num_key_value_heads=2, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-2b-kv2-17l": ("phi3", dict(hidden_size=2560, intermediate_size=8704, num_hidden_layers=17,
                                     num_attention_heads=20, num_key_value_heads=2, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    "llama-1b-kv3-23l": ("llama", dict(hidden_size=1536, intermediate_size=5376, num_hidden_layers=23,
                                       num_attention_heads=12, num_key_value_heads=3, head_dim=128, vocab_size=128256,
                                       tie_word_embeddings=True, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-2b-kv1-21l-f6144": ("mistral", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=21,
                                                 num_attention_heads=16, num_key_value_heads=1, head_dim=128,
                                                 vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                                 max_position_embeddings=32768, sliding_window=None)),
    # impl-holdout24 (HOLDOUT.md): seven layouts never run, drawn in the twentieth session with
    # draw_holdout24.py (draw_holdout20's generator, seed "roofcalc impl-holdout24 2026-11-28")
    "llama-2b-kv1-22l": ("llama", dict(hidden_size=2048, intermediate_size=7168, num_hidden_layers=22,
                                       num_attention_heads=16, num_key_value_heads=1, head_dim=128, vocab_size=100352,
                                       tie_word_embeddings=False, rope_theta=500000.0, max_position_embeddings=16384)),
    "mistral-2b-kv3-14l": ("mistral", dict(hidden_size=3072, intermediate_size=8448, num_hidden_layers=14,
                                           num_attention_heads=24, num_key_value_heads=3, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-2b-kv1-23l": ("qwen2", dict(hidden_size=2304, intermediate_size=7936, num_hidden_layers=23,
                                       num_attention_heads=18, num_key_value_heads=1, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-2b-kv1-17l": ("qwen3", dict(hidden_size=2560, intermediate_size=7168, num_hidden_layers=17,
                                       num_attention_heads=20, num_key_value_heads=1, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "phi3-1b-kv8-22l": ("phi3", dict(hidden_size=2048, intermediate_size=5376, num_hidden_layers=22,
                                     num_attention_heads=16, num_key_value_heads=8, vocab_size=32064,
                                     tie_word_embeddings=False, max_position_embeddings=16384,
                                     original_max_position_embeddings=16384, sliding_window=None, pad_token_id=0)),
    "llama-2b-kv6-16l-h3072": ("llama", dict(hidden_size=3072, intermediate_size=9984, num_hidden_layers=16,
                                             num_attention_heads=24, num_key_value_heads=6, head_dim=128,
                                             vocab_size=64256, tie_word_embeddings=False, rope_theta=500000.0,
                                             max_position_embeddings=16384)),
    "mistral-2b-kv2-14l-f8192": ("mistral", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=14,
                                                 num_attention_heads=24, num_key_value_heads=2, head_dim=128,
                                                 vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                                 max_position_embeddings=32768, sliding_window=None)),
    # h200x2/hf-tp-holdout5 (HOLDOUT.md): four layouts never run, drawn in the sixteenth session with
    # draw_tp_holdout5.py (KV heads even, for two GPUs), run by hf_tp.py --set holdout5
    "llama-2b-kv2-20l-f7680": ("llama", dict(hidden_size=2304, intermediate_size=7680, num_hidden_layers=20,
                                             num_attention_heads=18, num_key_value_heads=2, head_dim=128,
                                             vocab_size=64256, tie_word_embeddings=False, rope_theta=500000.0,
                                             max_position_embeddings=16384)),
    "mistral-1b-kv2-26l": ("mistral", dict(hidden_size=1792, intermediate_size=6144, num_hidden_layers=26,
                                           num_attention_heads=14, num_key_value_heads=2, head_dim=128,
                                           vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
                                           max_position_embeddings=32768, sliding_window=None)),
    "qwen2-1b-kv2-25l": ("qwen2", dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=25,
                                       num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
                                       tie_word_embeddings=True, rope_theta=1000000.0, max_position_embeddings=32768)),
    "qwen3-3b-kv4-26l": ("qwen3", dict(hidden_size=3072, intermediate_size=9984, num_hidden_layers=26,
                                       num_attention_heads=24, num_key_value_heads=4, head_dim=128,
                                       vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
                                       max_position_embeddings=40960)),
    "mistral-7b": (
        "mistral",
        dict(
            hidden_size=4096,
            intermediate_size=14336,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=32768,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
            sliding_window=None,
        ),
    ),
}

SETS = {
    "dev": dict(
        models="llama-1b,qwen2-0.5b,qwen3-0.6b,phi3-mini,nemo-16l",
        decode=[(1, 512), (8, 4096), (32, 1024), (64, 512), (1, 16384), (16, 8192), (4, 2048)],
        cache_variants=[(8, 4096, 16384)],  # batch, context, max_cache_len
        dynamic=[(4, 1000), (16, 4000)],
        trace_decode=[(16, 8192)],
        prefill=[(1, 512), (4, 2048), (1, 8192)],
    ),
    "holdout": dict(
        models="llama-8b,qwen2-1.5b,qwen3-4b,phi3-small-gqa,mistral-7b",
        decode=[(2, 768), (12, 3000), (48, 700), (1, 12000), (24, 6000), (6, 1500)],
        cache_variants=[(3, 2500, 10000)],
        dynamic=[(3, 1500), (24, 2500)],
        prefill=[(2, 700), (1, 3000), (6, 1200)],
    ),
    "holdout2": dict(
        models="llama-3b,qwen2-7b,qwen3-1.7b,phi3-medium-20l,nemo-12b",
        decode=[(3, 900), (20, 2200), (40, 1100), (2, 9000), (10, 5000)],
        cache_variants=[(5, 1800, 7000)],
        dynamic=[(2, 1300), (12, 3300)],
        prefill=[(1, 900), (3, 1500), (2, 4000)],
    ),
    "holdout3": dict(
        models="llama-2b-wide,qwen2-3b,qwen3-8b-20l,phi3-gqa-128,mistral-20l",
        decode=[(6, 1300), (28, 2600)],
        cache_variants=[],
        dynamic=[(1, 800), (8, 2000), (32, 600)],
        prefill=[(1, 300), (2, 1000), (4, 2500), (1, 6000)],
    ),
    # host-paced steps timed with the host's speed around each; graph decode traced at its first
    # shape (batch 2, context 600) and timed at others, among them batch x4 and context x4
    "holdout5": dict(
        models="llama-1b-deep,qwen2-1b-narrow,qwen3-2b-wide,mistral-4b,phi3-mini-12l",
        decode=[(2, 600), (8, 2400), (32, 800), (3, 5000), (8, 600)],
        cache_variants=[],
        dynamic=[(2, 700), (16, 1800)],
        prefill=[(1, 200), (1, 800), (4, 800), (2, 3200)],
    ),
    # graph decode traced at batch 3, context 700 and timed there and at other shapes (batch x4
    # and context x4 among them), for the trace predictor
    "holdout6": dict(
        models="llama-3b-gqa2,mistral-6b-30l,qwen2-2b-24l,qwen3-1b-deep,phi3-2b-gqa",
        decode=[(3, 700), (12, 2800), (48, 900), (2, 7000), (12, 700)],
        cache_variants=[],
        dynamic=[],
        prefill=[],
    ),
    # the rotary pass-through cat of transformers' Phi-3 code (impls/hf.yaml rope_pass_cat): three
    # Phi-3 layouts never run before, graph decode and GPU-bound prefill
    "holdout7": dict(
        models="phi3-1b-mha,phi3-3b-gqa8,phi3-4b-40l",
        decode=[(4, 1000), (16, 3000), (1, 6000), (32, 700)],
        cache_variants=[],
        dynamic=[],
        prefill=[(4, 1024), (2, 2500), (8, 600)],
    ),
    # the implementations' hold-out as the ninth session found them (no implementation model
    # changed since impl-holdout7): five layouts never run, every implementation, one GPU
    "holdout8": dict(
        models="llama-2b-kv6,qwen3-3b-qk,qwen2-1b-kv2,mistral-hd128-20l,phi3-2b-h40",
        decode=[(2, 900), (16, 2000), (48, 600), (1, 12000), (8, 5000)],
        cache_variants=[],
        dynamic=[(4, 900), (24, 1500)],
        prefill=[(1, 400), (2, 1500), (4, 3000), (1, 7000)],
    ),
    # the implementations' hold-out of the eleventh session: five layouts never run (two of them
    # with two or four KV heads beside biases or a head of 64), every implementation, one GPU;
    # more GPU-paced prefill shapes than holdout8
    "holdout9": dict(
        models="qwen2-2b-kv2b,llama-1b-hd64,qwen3-1b-kv4,mistral-3b-kv4,phi3-1b-kv4",
        decode=[(3, 800), (12, 2500), (40, 700), (2, 10000), (6, 4000)],
        cache_variants=[],
        dynamic=[(3, 800), (20, 1600)],
        prefill=[(1, 300), (2, 1200), (3, 2500), (1, 6000), (2, 4500)],
    ),
    # the eleventh session's second implementations' hold-out, on an H200: three layouts never
    # run, long prompts beside short ones (cuDNN's flash forward and the step's last kernels)
    "holdout10": dict(
        models="qwen2-1b-h14kv2,llama-2b-h40hd64,mistral-2b-kv2",
        decode=[(4, 1500), (24, 3000), (2, 9000)],
        cache_variants=[],
        dynamic=[(5, 1100)],
        prefill=[(1, 500), (4, 1800), (1, 9000), (2, 12000)],
    ),
    # the twelfth session's hold-out for the implementation's own host time per layer: four layouts
    # never run, prompts the host paces and ones the GPU paces, prefill of hf and fused (with
    # --host-layers), and fused graph decode
    "holdout11": dict(
        models="llama-1b-kv2-20l,mistral-3b-h24-16l,qwen3-2b-kv8,phi3-2b-kv4-18l",
        decode=[(6, 2200)],
        cache_variants=[],
        dynamic=[],
        prefill=[(1, 250), (1, 450), (2, 350), (2, 2400), (1, 7000)],
    ),
    # the twelfth session's second hold-out for the implementation's own host time per layer (the
    # tiny models built and warmed before any timing, 24 interleaved steps of each): five layouts
    # never run, more prompts the host paces
    "holdout12": dict(
        models="llama-2b-kv4-18l,mistral-2b-h32hd64,qwen2-1b-kv2-24l,qwen3-1b-kv2-28l,phi3-1b-kv8-20l",
        decode=[(5, 1800)],
        cache_variants=[],
        dynamic=[],
        prefill=[(1, 200), (1, 400), (2, 300), (3, 250), (2, 2000), (1, 6000)],
    ),
    # the twelfth session's third hold-out for --host-layer, after its mends: four layouts never run,
    # transformers' DynamicCache decode from Python beside host-paced and GPU-paced prefills
    "holdout13": dict(
        models="llama-1b-kv8-24l,mistral-1b-kv4-26l,qwen2-2b-kv4-20l,qwen3-2b-kv4-20l",
        decode=[(4, 2500)],
        cache_variants=[],
        dynamic=[(2, 900), (8, 2000), (24, 600)],
        prefill=[(1, 300), (2, 500), (1, 3000)],
    ),
    # the twelfth session's hold-out of host_ops_native: transformers' DynamicCache decode from Python
    # with its own host time per layer, and prefills, of four layouts never run
    "holdout14": dict(
        models="llama-2b-kv2-22l,mistral-2b-kv6-18l,qwen2-1b-kv2-28l,phi3-2b-kv8-16l",
        decode=[],
        cache_variants=[],
        dynamic=[(1, 700), (4, 1500), (12, 3000), (32, 400)],
        prefill=[(1, 250), (3, 400), (2, 2500)],
    ),
    # the twelfth session's last hold-out, after its last model change: four layouts never run,
    # transformers' prefill and DynamicCache decode, the fused layout's prefill and graph decode
    "holdout15": dict(
        models="llama-1b-kv4-20l,mistral-3b-kv4-20l,qwen3-1b-kv8-24l,phi3-1b-kv4-22l",
        decode=[(3, 3000)],
        cache_variants=[],
        dynamic=[(2, 1200), (16, 800)],
        prefill=[(1, 350), (2, 600), (1, 5000)],
    ),
    # the thirteenth session's hold-out, with the implementation's own host time per layer timed
    # under torch.no_grad() as the steps run: four layouts never run, transformers' prefill and
    # DynamicCache decode, the fused layout's prefill and graph decode
    "holdout16": dict(
        models="llama-2b-kv6-16l,mistral-1b-kv2-24l,qwen3-1b-kv2-18l,phi3-2b-kv10-20l",
        decode=[(4, 2600)],
        cache_variants=[],
        dynamic=[(3, 1000), (10, 2200)],
        prefill=[(1, 280), (2, 450), (3, 320), (1, 4000)],
    ),
    # the thirteenth session's second hold-out, after impl-holdout16's evaluation: five layouts never
    # run, the same kinds of step, other shapes
    "holdout17": dict(
        models="llama-3b-kv4-14l,mistral-2b-kv8-20l,qwen2-2b-kv6-20l,qwen3-2b-kv4-16l,phi3-1b-kv6-24l",
        decode=[(8, 1800)],
        cache_variants=[],
        dynamic=[(2, 1400), (6, 600)],
        prefill=[(1, 360), (2, 240), (4, 200), (1, 2800)],
    ),
    # the thirteenth session's hold-out of --cudnn-plans-cached: four layouts never run, each
    # DynamicCache decode case timed twice (--dynamic-warm), and host-paced prefills
    "holdout18": dict(
        models="llama-2b-kv2-18l,mistral-3b-kv8-18l,qwen3-2b-kv6-18l,phi3-3b-kv8-18l",
        decode=[],
        cache_variants=[],
        dynamic=[(2, 1100), (5, 700), (12, 1600)],
        prefill=[(1, 320), (3, 260)],
    ),
    # the thirteenth session's last hold-out: four layouts never run, every kind of step of hf,
    # hf-dynamic (plans built and cached) and fused, drawn after impl-holdout18's mends
    "holdout19": dict(
        models="llama-1b-kv8-20l,mistral-2b-kv6-22l,qwen2-1b-kv4-24l,phi3-2b-kv4-20l",
        decode=[(6, 2200)],
        cache_variants=[],
        dynamic=[(3, 1300), (9, 800)],
        prefill=[(1, 300), (2, 380), (1, 3500)],
    ),
    # the fourteenth session's hold-out of the refitted host figures per layer (hf_layer_ops,
    # fused_layer_ops): seven layouts never run, every kind of step of hf, hf-dynamic (plans built
    # and cached) and fused; the shapes drawn with random.Random("roofcalc impl-holdout20 2026-11-28")
    "holdout20": dict(
        models="llama-1b-kv4-14l,mistral-3b-kv2-25l,qwen2-3b-kv6-18l,qwen3-3b-kv8-22l,phi3-3b-kv8-18l-f9728,"
        "llama-2b-kv2-20l,mistral-2b-kv1-21l",
        decode=[(6, 1900)],
        cache_variants=[],
        dynamic=[(10, 2300), (8, 1100)],
        prefill=[(3, 270), (2, 360), (3, 340), (1, 3600)],
    ),
    # the fifteenth session's hold-out: seven layouts never run, every kind of step of hf (graphs
    # too), hf-dynamic (plans built and cached) and fused; the shapes drawn with draw_holdout21.py
    "holdout21": dict(
        models="llama-3b-kv1-21l,mistral-2b-kv3-20l,qwen2-2b-kv3-23l,qwen3-1b-kv4-26l,phi3-2b-kv6-22l,"
        "llama-2b-kv8-24l,mistral-3b-kv1-17l",
        decode=[(10, 1800)],
        cache_variants=[],
        dynamic=[(6, 1400), (9, 700)],
        prefill=[(1, 450), (3, 410), (4, 340), (1, 3800)],
    ),
    # the sixteenth session's hold-out of the H200 registry's host figure (the median of the hot loops
    # timed around the steps of impl-holdout10 to -21, validation/expected/host_pool.py): seven layouts
    # never run, every kind of step of hf (graphs too), hf-dynamic (plans built and cached) and fused;
    # the shapes drawn with draw_holdout22.py
    "holdout22": dict(
        models="llama-1b-kv2-22l,mistral-3b-kv3-26l,qwen2-3b-kv1-25l,qwen3-1b-kv4-26l-f5376,phi3-1b-kv2-22l,"
        "llama-2b-kv3-20l,mistral-1b-kv2-21l",
        decode=[(6, 1500)],
        cache_variants=[],
        dynamic=[(2, 2000), (11, 2000)],
        prefill=[(3, 300), (2, 390), (2, 340), (1, 3200)],
    ),
    # the sixteenth session's second hold-out of the same model (the H200 host figure of
    # impl-holdout22, nothing changed since its evaluation): seven layouts never run, every kind of
    # step of hf (graphs too), hf-dynamic (plans built and cached) and fused; drawn with draw_holdout23.py
    "holdout23": dict(
        models="llama-3b-kv1-19l,mistral-2b-kv4-18l,qwen2-1b-kv3-25l,qwen3-1b-kv2-15l,phi3-2b-kv2-17l,"
        "llama-1b-kv3-23l,mistral-2b-kv1-21l-f6144",
        decode=[(8, 1700)],
        cache_variants=[],
        dynamic=[(5, 1300), (7, 1000)],
        prefill=[(4, 290), (2, 260), (4, 260), (1, 3100)],
    ),
    "holdout24": dict(
        models="llama-2b-kv1-22l,mistral-2b-kv3-14l,qwen2-2b-kv1-23l,qwen3-2b-kv1-17l,phi3-1b-kv8-22l,"
        "llama-2b-kv6-16l-h3072,mistral-2b-kv2-14l-f8192",
        decode=[(7, 2100)],
        cache_variants=[],
        dynamic=[(5, 1000), (8, 1700)],
        prefill=[(2, 350), (3, 200), (3, 350), (1, 2500)],
    ),
}
KV_BUDGET = 40e9  # bytes of KV cache a case may allocate


def config_of(name: str) -> dict[str, Any]:
    kind, kw = CONFIGS[name]
    return {"model_type": kind, **kw}


def kv_bytes(cfg: dict[str, Any], batch: int, tokens: int) -> int:
    d = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    return (
        2
        * 2
        * batch
        * tokens
        * cfg["num_hidden_layers"]
        * (cfg.get("num_key_value_heads") or cfg["num_attention_heads"])
        * d
    )


def build_hf(name: str) -> Any:
    from transformers import AutoConfig, AutoModelForCausalLM

    kind, kw = CONFIGS[name]
    cfg = AutoConfig.for_model(kind, **kw)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", dtype=torch.bfloat16)
    return model.eval(), cfg


def host_around(rec: dict[str, Any], fn: Any) -> Any:
    """fn() with the host's speed timed just before and just after it (llm_bench.host_op_s, the
    probe's hot loop: a host's speed drifts within a process, validation/expected/h100/host/jitter1),
    recorded as rec["host_op_s"] = {"before": s, "after": s}, as llm_bench records its steps."""
    from llm_bench import host_op_s

    before = host_op_s()
    out = fn()
    rec["host_op_s"] = {"before": before, "after": host_op_s()}
    return out


def issued(step: Any, steps: int, trace: Path | None, ready: Any = None) -> dict[str, Any]:
    """A step issued from Python: two warm-ups (then ``ready()``: hf_tp.py's barrier), ``steps``
    timed (a CUDA synchronise around each) with the host's speed timed around them, then, with
    ``trace``, one step traced (after the timing: a profiler session slows the host's later steps)."""
    for _ in range(2):
        step()
    if ready is not None:
        ready()
    res: dict[str, Any] = {}
    times = host_around(res, lambda: [sync_time(step) for _ in range(steps)])
    res.update({"median_s": statistics.median(times), "times_s": times})
    if trace is not None:
        trace_one(step, trace)
        res["trace"] = trace.name
    return res


def replayed(step: Any, replays: int, trace: Path | None) -> dict[str, Any]:
    """A step replayed from a CUDA graph: with ``trace``, one eager run of it traced first (a
    graph's kernels are read off the same code run eagerly), then ``replays`` replays timed."""
    res: dict[str, Any] = {}
    if trace is not None:
        trace_one(step, trace)
        res["trace"] = trace.name
    times, _g = graph_time(step, replays)
    return {"median_s": statistics.median(times), "times_s": times, **res}


def gather_case(d: Any, case: dict[str, Any], times: list[float], err: str | None, host: Any) -> bool:
    """A case run on every rank of a torchrun world (hf_tp.py, fused_tp.py): each rank's times,
    error and host speed gathered into ``case`` on rank 0; a step ends when its slowest rank does,
    so its time is the median over steps of the largest rank's. True where every rank timed it."""
    per_rank = d.gather_obj(times)
    errors = d.gather_obj(err)
    hosts = d.gather_obj(host)
    ok = all(per_rank) and not any(errors)
    if d.rank == 0:
        case.update(
            error=next((e for e in errors if e), None),
            times_s_per_rank=per_rank,
            median_s=statistics.median(max(ts) for ts in zip(*per_rank)) if ok else None,
        )
        if any(hosts):
            case["host_op_s_per_rank"] = hosts
    return ok


def graph_time(fn: Any, replays: int) -> tuple[list[float], Any]:
    """Capture fn in a CUDA graph (after warm-ups on a side stream), then time each replay."""
    g = capture(fn, warm=3)
    g.replay()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(replays)]
    for a, b in ev:
        a.record()
        g.replay()
        b.record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e-3 for a, b in ev], g


def static_cache(cfg: Any, batch: int, length: int) -> Any:
    from transformers import StaticCache

    for kw in (
        dict(config=cfg, max_batch_size=batch, max_cache_len=length, device="cuda", dtype=torch.bfloat16),
        dict(config=cfg, max_cache_len=length),
    ):
        try:
            return StaticCache(**kw)
        except TypeError:
            continue
    raise RuntimeError("StaticCache: no known constructor")


@torch.no_grad()
def hf_static(
    model: Any, cfg: Any, batch: int, context: int, cache_len: int, replays: int, trace: Path | None
) -> dict[str, Any]:
    cache = static_cache(cfg, batch, cache_len)
    tok = torch.randint(0, cfg.vocab_size, (batch, 1), device="cuda")
    pos = torch.tensor([context], device="cuda")

    def step() -> Any:
        out = model(input_ids=tok, past_key_values=cache, cache_position=pos, use_cache=True)
        return out.logits[:, -1].argmax(-1)

    step()  # the cache's layers are allocated on their first update
    return replayed(step, replays, trace)


@torch.no_grad()
def hf_dynamic(model: Any, cfg: Any, batch: int, context: int, steps: int, trace: Path | None) -> dict[str, Any]:
    ids = torch.randint(0, cfg.vocab_size, (batch, context), device="cuda")
    cache = model(input_ids=ids, use_cache=True).past_key_values
    tok = torch.randint(0, cfg.vocab_size, (batch, 1), device="cuda")

    def step() -> None:
        nonlocal cache
        o = model(input_ids=tok, past_key_values=cache, use_cache=True)
        cache = o.past_key_values
        o.logits[:, -1].argmax(-1)

    return {**issued(step, steps, trace), "context_mid": context + 2 + steps // 2}


@torch.no_grad()
def hf_dynamic_flash(model: Any, cfg: Any, batch: int, context: int, steps: int) -> dict[str, Any]:
    """hf-dynamic with SDPA held to its flash backend: no cuDNN plan to build each step."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return hf_dynamic(model, cfg, batch, context, steps, None)


@torch.no_grad()
def hf_prefill(model: Any, cfg: Any, batch: int, seq: int, steps: int, trace: Path | None) -> dict[str, Any]:
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda")

    def step() -> None:
        model(input_ids=ids, use_cache=True).logits[:, -1].argmax(-1)

    return issued(step, steps, trace)


@torch.no_grad()
def fused_decode(cfg: dict[str, Any], batch: int, context: int, replays: int, trace: Path | None) -> dict[str, Any]:
    from fused_model import FusedModel

    m = FusedModel(cfg, batch, context + 1)
    tok = torch.randint(0, cfg["vocab_size"], (batch, 1), device="cuda")
    pos = torch.tensor([context], device="cuda", dtype=torch.int32)

    def step() -> Any:
        return m.forward(tok, pos, context + 1)

    step()
    return replayed(step, replays, trace)


@torch.no_grad()
def fused_prefill(cfg: dict[str, Any], batch: int, seq: int, steps: int, trace: Path | None) -> dict[str, Any]:
    from fused_model import FusedModel

    m = FusedModel(cfg, batch, seq)
    ids = torch.randint(0, cfg["vocab_size"], (batch, seq), device="cuda")
    pos = torch.arange(seq, device="cuda", dtype=torch.int32)

    def step() -> None:
        m.forward(ids, pos, seq)

    res = issued(step, steps, trace)
    del m
    return res


def host_figures(names: list[str]) -> dict[str, Any]:
    """The host's own figures on this machine, timed in the same call as the steps: a hot loop of
    one small PyTorch op, of a trivial Triton launch and of entering sdpa_kernel, and per model the
    cost of SDPA's cuDNN attention at a KV length it has not seen (its plan built) and seen."""
    import triton
    import triton.language as tl
    from torch.nn.attention import SDPBackend, sdpa_kernel

    @triton.jit
    def _nop(x_ptr):
        tl.store(x_ptr, tl.load(x_ptr) + 1)

    x = torch.zeros(16, device="cuda")

    def loop(fn: Any, n: int = 2000) -> float:
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n

    def ctx() -> None:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            pass

    out: dict[str, Any] = {
        "torch_op_s": statistics.median(loop(lambda: x.add_(1)) for _ in range(5)),
        "triton_launch_s": statistics.median(loop(lambda: _nop[(1,)](x)) for _ in range(5)),
        "sdpa_ctx_s": statistics.median(loop(ctx) for _ in range(5)),
        "cudnn": {},
    }
    F = torch.nn.functional
    for name in names:
        cfg = config_of(name)
        h, kvh = cfg["num_attention_heads"], cfg.get("num_key_value_heads") or cfg["num_attention_heads"]
        d = cfg.get("head_dim") or cfg["hidden_size"] // h
        q = torch.randn(4, h, 1, d, device="cuda", dtype=torch.bfloat16)
        kv = torch.randn(4, kvh, 1200, d, device="cuda", dtype=torch.bfloat16)
        new, seen = [], []
        for n in range(1001, 1011):
            k = kv[:, :, :n]
            for lst in (new, seen):  # the first call at this length builds the plan, the second finds it
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                F.scaled_dot_product_attention(q, k, k, enable_gqa=kvh != h)
                torch.cuda.synchronize()
                lst.append(time.perf_counter() - t0)
        out["cudnn"][name] = {
            "new_length_s": new,
            "seen_length_s": seen,
            "plan_s": statistics.median(new) - statistics.median(seen),
        }
    return out


@torch.no_grad()
def profiler_check(name: str, batch: int, seq: int, steps: int) -> dict[str, Any]:
    """Does a torch.profiler session slow the host's later steps in the same process? A prefill
    timed, one step traced (and thrown away), the same prefill timed again."""
    import tempfile

    model, cfg = build_hf(name)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda")

    def step() -> None:
        model(input_ids=ids, use_cache=True).logits[:, -1].argmax(-1)

    for _ in range(2):
        step()
    before = [sync_time(step) for _ in range(steps)]
    with tempfile.TemporaryDirectory() as tmp:
        trace_one(step, Path(tmp) / "t.json.gz")
    after = [sync_time(step) for _ in range(steps)]
    del model
    torch.cuda.empty_cache()
    return {
        "model": name,
        "batch": batch,
        "seq": seq,
        "before_s": before,
        "after_s": after,
        "before_median_s": statistics.median(before),
        "after_median_s": statistics.median(after),
    }


_TINY: dict[tuple[str, str], Any] = {}
TINY_WARM_S = 2.0  # seconds of warm steps for a freshly built pair of tiny models


@torch.no_grad()
def tiny_models(impl: str, name: str) -> Any:
    """The config at 2 and at 6 layers, a 4-token prefill each (host_track.build), built once per
    process and then run back to back for TINY_WARM_S: in impl-holdout11 the first timing after a
    build read up to 1.4x the later ones (the host slow after the build). Warmed under
    torch.no_grad(), the mode they are timed in (host_layer_s)."""
    from host_track import build

    if (impl, name) not in _TINY:
        pair = (build(impl, name, 2, 1, 4), build(impl, name, 6, 1, 4))
        t_end = time.monotonic() + TINY_WARM_S
        while time.monotonic() < t_end:
            pair[0]()
            pair[1]()
        torch.cuda.synchronize()
        _TINY[impl, name] = pair
    return _TINY[impl, name]


@torch.no_grad()
def host_layer_s(impl: str, name: str) -> float:
    """The implementation's own host time per decoder layer now (host_track.py's measure: the
    model's config at 2 and at 6 layers, a 4-token prefill, the GPU almost idle, 5 warm steps of
    each and then 24 of each interleaved, the difference of the medians over the 4 layers).
    Under torch.no_grad(), the mode every step here runs in. Until impl-holdout15 it ran in
    PyTorch's default mode, where transformers' parameters (they require grad) make each op record
    autograd's graph, which the steps, under no_grad, never did (host_mode.py times the two modes);
    the fused layout's weights are plain tensors, which record nothing in either mode."""
    from host_track import per_layer

    return float(per_layer(*tiny_models(impl, name), warm=5, n=24)["s"])


def with_host_layers(on: bool, impl: str, name: str, fn: Any) -> Any:
    """fn, and with ``on`` the implementation's own host time per layer timed just before and just
    after it, recorded as host_layer_s = {"before": s, "after": s, "autograd": "no_grad"}."""
    if not on:
        return fn

    def run() -> dict[str, Any]:
        before = host_layer_s(impl, name)
        res = dict(fn())
        res["host_layer_s"] = {"before": before, "after": host_layer_s(impl, name), "autograd": "no_grad"}
        return res

    return run


def run_cases(args: argparse.Namespace, doc: dict[str, Any], out: Path) -> None:
    spec = SETS[args.set]
    tdir = out / "traces"
    tdir.mkdir(parents=True, exist_ok=True)
    impls = args.impls.split(",")
    t_end = time.monotonic() + args.budget_s

    def record(case: dict[str, Any], fn: Any) -> None:
        if time.monotonic() > t_end:
            case["error"] = "skipped: over the time budget"
        else:
            try:
                case.update(fn())
                case["error"] = None
            except Exception as e:  # noqa: BLE001 - recorded, the run goes on
                case["error"] = f"{type(e).__name__}: {e}"[:400]
                traceback.print_exc(limit=3)
            torch.cuda.empty_cache()
        doc["cases"].append(case)
        (out / "times.json").write_text(json.dumps(doc, indent=1))
        print(case["label"], case.get("median_s"), case.get("error"), flush=True)

    for name in (args.models or spec["models"]).split(","):
        cfgd = config_of(name)
        traced: set[str] = set()

        def tpath(kind: str, label: str) -> Path | None:
            if not args.trace or kind in traced:
                return None
            traced.add(kind)
            return tdir / f"{label}.json.gz"

        hf_needed = any(i.startswith("hf") for i in impls)
        model = cfg = None
        if hf_needed:
            try:
                model, cfg = build_hf(name)
            except Exception as e:  # noqa: BLE001
                doc["cases"].append(
                    {
                        "label": f"hf-{name}",
                        "model": name,
                        "config": cfgd,
                        "error": f"build: {type(e).__name__}: {e}"[:400],
                    }
                )
                print("build failed", name, e, flush=True)
        if model is not None and args.host_layers and ("hf-prefill" in impls or "hf-dynamic" in impls):
            tiny_models("hf", name)  # built and warmed before any timing, not at the first case
        base = {"model": name, "config": cfgd}
        if model is not None and "hf-static" in impls:
            shapes = [(b, c, c + args.slack) for b, c in spec["decode"]] + list(spec["cache_variants"])
            for b, c, L in shapes:
                if kv_bytes(cfgd, b, L) > KV_BUDGET:
                    continue
                lab = f"hf-static-{name}-decode-b{b}-c{c}-L{L}"
                record(
                    {
                        **base,
                        "label": lab,
                        "impl": "hf-static",
                        "phase": "decode",
                        "batch": b,
                        "context": c,
                        "max_cache_len": L,
                        "cuda_graphs": True,
                    },
                    lambda b=b, c=c, L=L, lab=lab: hf_static(model, cfg, b, c, L, args.replays, tpath("static", lab)),
                )
        if model is not None and "hf-dynamic" in impls:
            for b, c in spec["dynamic"]:
                if kv_bytes(cfgd, b, c + 64) > KV_BUDGET:
                    continue
                lab = f"hf-dynamic-{name}-decode-b{b}-c{c}"
                record(
                    {
                        **base,
                        "label": lab,
                        "impl": "hf-dynamic",
                        "phase": "decode",
                        "batch": b,
                        "context": c,
                        "cuda_graphs": False,
                    },
                    # transformers' own host time per layer (its prefill's modules, as --host-layer takes it)
                    with_host_layers(
                        args.host_layers,
                        "hf",
                        name,
                        lambda b=b, c=c, lab=lab: hf_dynamic(model, cfg, b, c, args.steps, tpath("dynamic", lab)),
                    ),
                )
                if args.dynamic_warm:
                    # the same batch and lengths again: cuDNN finds each length's plan in its cache
                    record(
                        {
                            **base,
                            "label": lab + "-warm",
                            "impl": "hf-dynamic",
                            "phase": "decode",
                            "batch": b,
                            "context": c,
                            "cuda_graphs": False,
                            "cudnn_plans_cached": True,
                        },
                        with_host_layers(
                            args.host_layers, "hf", name, lambda b=b, c=c: hf_dynamic(model, cfg, b, c, args.steps, None)
                        ),
                    )
        if model is not None and "hf-dynamic-flash" in impls:
            for b, c in spec["dynamic"]:
                lab = f"hf-dynamic-flash-{name}-decode-b{b}-c{c}"
                record(
                    {
                        **base,
                        "label": lab,
                        "impl": "hf-dynamic-flash",
                        "phase": "decode",
                        "batch": b,
                        "context": c,
                        "cuda_graphs": False,
                    },
                    lambda b=b, c=c: hf_dynamic_flash(model, cfg, b, c, args.steps),
                )
        if model is not None and args.trace_shapes:
            for b, c in spec.get("trace_decode", []):
                if kv_bytes(cfgd, b, c + args.slack) > KV_BUDGET:
                    continue
                lab = f"hf-static-{name}-decode-b{b}-c{c}-L{c + args.slack}"
                record(
                    {
                        **base,
                        "label": lab + "-traced",
                        "impl": "hf-static",
                        "phase": "decode",
                        "batch": b,
                        "context": c,
                        "max_cache_len": c + args.slack,
                        "cuda_graphs": True,
                        "purpose": "kernel times",
                    },
                    lambda b=b, c=c, lab=lab: hf_static(
                        model, cfg, b, c, c + args.slack, args.replays, tdir / f"{lab}.json.gz"
                    ),
                )
        if model is not None and "hf-prefill" in impls:
            for b, s in spec["prefill"]:
                lab = f"hf-{name}-prefill-b{b}-s{s}"
                record(
                    {**base, "label": lab, "impl": "hf", "phase": "prefill", "batch": b, "seq": s},
                    with_host_layers(
                        args.host_layers,
                        "hf",
                        name,
                        lambda b=b, s=s, lab=lab: hf_prefill(
                            model, cfg, b, s, max(5, args.steps // 2), tpath("prefill", lab)
                        ),
                    ),
                )
        del model
        torch.cuda.empty_cache()
        if "fused" in impls and cfgd["model_type"] in ("llama", "mistral"):
            if args.host_layers:
                tiny_models("fused", name)
            for b, c in spec["decode"]:
                if kv_bytes(cfgd, b, c + 1) > KV_BUDGET:
                    continue
                lab = f"fused-{name}-decode-b{b}-c{c}"
                record(
                    {
                        **base,
                        "label": lab,
                        "impl": "fused",
                        "phase": "decode",
                        "batch": b,
                        "context": c,
                        "cuda_graphs": True,
                    },
                    lambda b=b, c=c, lab=lab: fused_decode(cfgd, b, c, args.replays, tpath("fused-decode", lab)),
                )
            for b, s in spec["prefill"]:
                lab = f"fused-{name}-prefill-b{b}-s{s}"
                record(
                    {**base, "label": lab, "impl": "fused", "phase": "prefill", "batch": b, "seq": s},
                    with_host_layers(
                        args.host_layers,
                        "fused",
                        name,
                        lambda b=b, s=s, lab=lab: fused_prefill(
                            cfgd, b, s, max(5, args.steps // 2), tpath("fused-prefill", lab)
                        ),
                    ),
                )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--set", choices=sorted(SETS), required=True)
    ap.add_argument("--models", default=None)
    ap.add_argument("--impls", default="hf-static,hf-dynamic,hf-prefill,fused")
    ap.add_argument("--slack", type=int, default=64, help="max_cache_len = context + this (StaticCache)")
    ap.add_argument("--replays", type=int, default=20)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--trace-shapes", action="store_true", help="also trace the set's trace_decode shapes (hf-static)")
    ap.add_argument("--host", action="store_true", help="time the host's figures first (host_figures)")
    ap.add_argument(
        "--host-layers",
        action="store_true",
        help="time each prefill's implementation's own host time per layer around it (host_layer_s)",
    )
    ap.add_argument(
        "--profiler-check", action="store_true", help="last: a prefill timed before and after a profiler session"
    )
    ap.add_argument(
        "--dynamic-warm",
        action="store_true",
        help="time each hf-dynamic case again right after it (cuDNN's plans then cached: cudnn_plans_cached)",
    )
    ap.add_argument("--budget-s", type=float, default=420)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import transformers

    doc: dict[str, Any] = {
        **run_header("roofcalc-impl-bench-1"),
        "set": args.set,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "triton": __import__("triton").__version__,
        "cases": [],
    }
    torch.manual_seed(0)
    if args.host:
        doc["host"] = host_figures((args.models or SETS[args.set]["models"]).split(","))
        (out / "times.json").write_text(json.dumps(doc, indent=1))
        print(
            "host",
            {k: v for k, v in doc["host"].items() if k != "cudnn"},
            {k: round(v["plan_s"] * 1e3, 2) for k, v in doc["host"]["cudnn"].items()},
            flush=True,
        )
    run_cases(args, doc, out)
    if args.profiler_check:
        name = (args.models or SETS[args.set]["models"]).split(",")[0]
        doc["profiler_check"] = profiler_check(name, 1, 600, args.steps)
        print("profiler check", {k: v for k, v in doc["profiler_check"].items() if "median" in k}, flush=True)
    (out / "times.json").write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
