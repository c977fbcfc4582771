"""Model presets for the transformer ops (decode, prefill): ``models/*.yaml``, and HF config.json."""

from __future__ import annotations

import functools

from pydantic import BaseModel, ConfigDict, Field

from .errors import InputError, suggest
from .specfile import parse_yaml, validate


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    source: str
    note: str | None = None
    params: dict[str, int | float | bool | str] = Field(min_length=1)


class PresetFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    description: str
    presets: dict[str, Preset] = Field(min_length=1)


def _validate_presets(text: str, label: str) -> PresetFile:
    return validate(PresetFile, parse_yaml(text, label, trusted=True), label)


@functools.cache
def load_presets() -> PresetFile:
    """Every preset of every file in models/, merged; a name defined twice is an error."""
    from .errors import SpecError
    from .registry import builtin_label, builtin_names, load_builtin

    merged: dict[str, Preset] = {}
    where: dict[str, str] = {}
    descriptions: list[str] = []
    for stem in builtin_names("model"):
        label = builtin_label("model", stem)
        pf = load_builtin("model", stem, functools.partial(_validate_presets, label=label), PresetFile)
        descriptions.append(pf.description)
        for name, preset in pf.presets.items():
            if name in merged:
                raise SpecError(f"{label}: presets.{name}: already defined in {where[name]}")
            merged[name], where[name] = preset, label
    if not merged:
        raise SpecError("no model presets installed (models/*.yaml)")
    return PresetFile(description=" ".join(descriptions), presets=merged)


def get_preset(name: str) -> Preset:
    pf = load_presets()
    key = name.strip().lower()
    if key not in pf.presets:
        names = list(pf.presets)
        raise InputError(f"unknown model {name!r}{suggest(name, names)}; known: {', '.join(names)}")
    return pf.presets[key]


# Hugging Face config.json keys -> op parameters. Layouts: Llama/Mistral/Qwen2 (dense) and
# Mixtral (num_local_experts) / Qwen-MoE (num_experts, moe_intermediate_size).
HF_REQUIRED = {
    "hidden_size": "hidden",
    "num_hidden_layers": "layers",
    "num_attention_heads": "heads",
    "intermediate_size": "ffn",
    "vocab_size": "vocab",
}


MAX_CONFIG_INT = 2**31 - 1  # a model dimension beyond int32 is a corrupt or hostile config

# Decoder layouts whose kernels the LLM op files model: pre-norm attention (optionally grouped
# KV heads, optional Q/K/V biases, which cuBLAS adds in the GEMM's epilogue) and a gated MLP,
# dense or mixture-of-experts; Qwen3's per-head q/k norms (qk_norm) and Phi-3's fused qkv_proj
# and gate_up_proj (fused_qkv, fused_gate_up) are read as parameters that change the kernels, as
# is Phi-3's rotary code, which joins the rotated and the untouched parts of q and k with one more
# torch.cat each (rope_pass_cat: the hf implementations' kernel lists read it).
# Others differ in kernels the model would not count (Gemma 2's logit soft-capping and extra
# norms, ...): refused, naming what is supported.
SUPPORTED_MODEL_TYPES = ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "phi3", "gemma")
LAYOUT_FLAGS = {"qwen3": {"qk_norm": True}, "phi3": {"fused_qkv": True, "fused_gate_up": True, "rope_pass_cat": True}}
# config classes whose head_dim defaults to a number rather than hidden_size / heads (transformers'
# Qwen3Config: head_dim=128)
HEAD_DIM_DEFAULTS = {"qwen3": 128}


def _model_type(cfg: dict[str, object]) -> str | None:
    """config.json's model_type, else its first architecture's (LlamaForCausalLM -> llama)."""
    t = cfg.get("model_type")
    if isinstance(t, str) and t:
        return t.lower()
    arch = cfg.get("architectures")
    if isinstance(arch, list) and arch and isinstance(arch[0], str):
        name = arch[0].removesuffix("ForCausalLM").removesuffix("LMHeadModel")
        known = {t.replace("_", ""): t for t in SUPPORTED_MODEL_TYPES}
        return known.get(name.lower(), name.lower())
    return None


def _check_layout(cfg: dict[str, object], path: str) -> None:
    from .units import clip

    kind = _model_type(cfg)
    if kind is not None and kind not in SUPPORTED_MODEL_TYPES:
        raise InputError(
            f"{path}: model_type: {clip(kind, 40)!r} is not modelled (supported: {', '.join(SUPPORTED_MODEL_TYPES)}); "
            "its kernels differ from the decoder layout roofcalc counts"
        )
    window = cfg.get("sliding_window")
    in_use = window not in (None, 0, False) and cfg.get("use_sliding_window", True) is not False
    if in_use and (isinstance(window, bool) or not isinstance(window, int)):
        raise InputError(f"{path}: sliding_window: expected an integer or null, got {clip(repr(window), 40)}")
    longest = cfg.get("max_position_embeddings")
    covers = isinstance(window, int) and isinstance(longest, int) and not isinstance(window, bool) and window >= longest
    if in_use and not covers:
        raise InputError(
            f"{path}: sliding_window: attention over a window of {clip(window, 20)} tokens is not modelled "
            "(the whole context would be counted); set it to null for full attention"
        )


def params_from_hf_config(path: str) -> dict[str, int | bool]:
    """Model dimensions from a local Hugging Face config.json (no network)."""
    from .specfile import parse_json, read_text
    from .units import clip

    # read_text refuses missing, special (FIFO, /dev/zero) and oversized files; parse_json
    # refuses nesting past 64 levels, 100-digit integers and non-finite numbers, by key path
    cfg = parse_json(read_text(path, what="model config"), str(path))
    if not isinstance(cfg, dict):
        raise InputError(f"{path}: expected a JSON object")
    if isinstance(cfg.get("text_config"), dict):  # multimodal wrappers keep the LM under text_config
        cfg = {**cfg, **cfg["text_config"]}
    _check_layout(cfg, str(path))

    def integer(key: str, minimum: int = 1) -> int:
        v = cfg[key]
        if isinstance(v, bool) or not isinstance(v, int):
            raise InputError(f"{path}: {key}: expected an integer, got {clip(repr(v), 40)}")
        if v < minimum:
            raise InputError(f"{path}: {key}: must be at least {minimum} (got {clip(v)})")
        if v > MAX_CONFIG_INT:
            raise InputError(f"{path}: {key}: {clip(v)} is absurdly large (at most {MAX_CONFIG_INT:,})")
        return v

    missing = [k for k in HF_REQUIRED if k not in cfg]
    if "intermediate_size" in missing and "moe_intermediate_size" in cfg:
        missing.remove("intermediate_size")
    if missing:
        raise InputError(f"{path}: {missing[0]}: required field is missing")
    out: dict[str, int | bool] = {}
    for key, name in HF_REQUIRED.items():
        if key in cfg:
            out[name] = integer(key)
    heads = int(out["heads"])
    out["kv_heads"] = integer("num_key_value_heads") if cfg.get("num_key_value_heads") is not None else heads
    if heads % int(out["kv_heads"]):
        raise InputError(f"{path}: num_key_value_heads: {out['kv_heads']} does not divide num_attention_heads {heads}")
    if cfg.get("head_dim") is not None:
        out["head_dim"] = integer("head_dim")
    elif _model_type(cfg) in HEAD_DIM_DEFAULTS:  # the config class's own default, not hidden / heads
        out["head_dim"] = HEAD_DIM_DEFAULTS[str(_model_type(cfg))]
    else:
        if int(out["hidden"]) % heads:
            raise InputError(f"{path}: head_dim: missing, and hidden_size is not a multiple of num_attention_heads")
        out["head_dim"] = int(out["hidden"]) // heads
    tie = cfg.get("tie_word_embeddings", False)
    if not isinstance(tie, bool):
        raise InputError(f"{path}: tie_word_embeddings: expected true or false, got {clip(repr(tie), 40)}")
    out["tie_embeddings"] = tie
    experts_key = next((k for k in ("num_local_experts", "num_experts", "n_routed_experts") if cfg.get(k)), None)
    if experts_key:
        out["experts"] = integer(experts_key)
        out["experts_per_token"] = integer("num_experts_per_tok") if "num_experts_per_tok" in cfg else 2
        if out["experts_per_token"] > out["experts"]:
            raise InputError(
                f"{path}: num_experts_per_tok: {out['experts_per_token']} is more than {experts_key} ({out['experts']})"
            )
        if "moe_intermediate_size" in cfg:
            out["ffn"] = integer("moe_intermediate_size")
    if cfg.get("max_position_embeddings") is not None:
        out["max_context"] = integer("max_position_embeddings")
    out.update(LAYOUT_FLAGS.get(_model_type(cfg) or "", {}))
    return out
