"""A model's shape, from its Hugging Face `config.json`: KV bytes per token, parameters, work.

Reads the standard fields (layers, hidden size, attention heads, KV heads, head dim, MLA's
`kv_lora_rank`/`qk_rope_head_dim`, MoE experts, quantization) of dense and MoE decoders:
Llama/Qwen (GQA), DeepSeek V3/R1/Kimi K2 (MLA + MoE), DeepSeek V4 (compressed KV: layer `l`
keeps one entry per `compress_ratios[l]` tokens, in SGLang's layout, `CompressedKv`), gpt-oss
and Qwen3.5 (only `full_attention` layers keep KV for the whole context). Parameter counts are
approximate (attention projections by formula, norms and biases ignored); they feed the roofline
and the power model, whose efficiency factors are fitted anyway. KV bytes per token follow the
config exactly, at the KV dtype (`kv_dtype_bytes`, default 2: SGLang and vLLM keep BF16 KV
unless told otherwise); DeepSeek V4's compressed KV has its own fixed layout.

Configs come from aiconfigurator-core's `model_configs` when it is installed, else from the
few shipped in `data/models/`, or are passed as a dict. The local engine's generated model
(`agentload-random-llama-<layers>x<hidden>`, `agentload.engines.model_gen`) is described from
its generator's spec (f16 weights and KV: 2 bytes each, filed as bf16).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from agentload.engines import model_gen
from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.sim.specs.work import WorkModel

Dtype = Literal["fp4", "fp8", "bf16"]
BYTES_PER_PARAM: dict[Dtype, float] = {"fp4": 0.5625, "fp8": 1.0, "bf16": 2.0}
"""Weight bytes per parameter: FP4 (NVFP4/MXFP4) carries one 8-bit scale per 16 values."""
DEFAULT_KV_DTYPE_BYTES = 2.0
GATED_MLP_MATRICES = 3
"""Gate, up and down projections."""
UNGATED_MLP_MATRICES = 2
UNGATED_ACTIVATIONS = frozenset({"relu2", "gelu", "relu"})
"""Activations of MLPs without a gate (up and down projections only)."""
FLOPS_PER_MAC = 2


FP8_BYTES = 1
BF16_BYTES = 2
FP32_BYTES = 4
COMPRESSED_SCALE_BYTES = 8
"""Per compressed entry: its FP8 part's scales."""
INDEX_QUANT_BLOCK = 128
"""Indexer keys are FP8 with one 4-byte scale per this many values."""
CSA_RATIO = 4
HCA_RATIO = 128
RING_TOKENS = {(CSA_RATIO, False): 8, (CSA_RATIO, True): 16}
"""Compression state ring per request: tokens a CSA layer buffers (8, or 16 with speculative
decoding), SGLang's `get_compress_state_ring_size`; an HCA layer buffers its ratio (128), or
twice it with speculative decoding."""


class CompressedKv(Frozen):
    """DeepSeek V4's compressed-attention KV as SGLang holds it (`--attention-backend
    compressed`, the unified radix tree of its agentic recipes; `DSV4PoolConfigurator` in its
    memory pool configurator): per token, one entry per 4 tokens in each CSA layer (with an
    indexer key) and one per 128 in each HCA layer, an entry being the head's rotary part in
    BF16, the rest in FP8, and 8 bytes of scales; per request, the sliding window of every layer
    in BF16 and each compressing layer's FP32 state ring."""

    layers: int = Field(ge=1)
    """Layers with a sliding window (every entry of `compress_ratios`, the MTP layer's too)."""
    csa_layers: int = Field(ge=0)
    hca_layers: int = Field(ge=0)
    window: int = Field(ge=0)
    head_dim: int = Field(ge=1)
    rope_dim: int = Field(ge=0)
    index_head_dim: int = Field(ge=0)

    def entry_bytes(self) -> float:
        """One compressed entry: the rotary part in BF16, the rest in FP8, and its scales."""
        rope = self.rope_dim
        return (self.head_dim - rope) * FP8_BYTES + rope * BF16_BYTES + COMPRESSED_SCALE_BYTES

    def index_entry_bytes(self) -> float:
        """One indexer key: FP8 with a 4-byte scale per `INDEX_QUANT_BLOCK` values."""
        dim = self.index_head_dim
        return dim * FP8_BYTES + dim // INDEX_QUANT_BLOCK * FP32_BYTES

    def bytes_per_token(self) -> float:
        """KV bytes one more token of context takes."""
        csa = self.csa_layers / CSA_RATIO
        hca = self.hca_layers / HCA_RATIO
        return (csa + hca) * self.entry_bytes() + csa * self.index_entry_bytes()

    def state_bytes(self, speculative: bool) -> float:
        """KV bytes a running request holds whatever its length: every layer's sliding window
        (BF16) and the compressing layers' state rings (FP32 key-value and score, CSA's with
        its overlap and its indexer's)."""
        window = self.window * self.head_dim * BF16_BYTES * self.layers
        csa_ring = RING_TOKENS[(CSA_RATIO, speculative)]
        csa = csa_ring * 4 * (self.head_dim + self.index_head_dim) * FP32_BYTES
        hca_ring = HCA_RATIO * (2 if speculative else 1)
        hca = hca_ring * 2 * self.head_dim * FP32_BYTES
        return window + csa * self.csa_layers + hca * self.hca_layers


class ExpertShape(Frozen):
    """A MoE layer's routed experts: hidden size, intermediate size, top-k, experts."""

    hidden: int = Field(ge=1)
    inter: int = Field(ge=1)
    topk: int = Field(ge=1)
    experts: int = Field(ge=1)


class ModelShape(Frozen):
    """What the simulator needs to know about a model."""

    name: str
    layers: int = Field(ge=1)
    hidden: int = Field(ge=1)
    heads: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    mla: bool = False
    """Multi-head latent attention: KV is one latent (`kv_lora_rank + rope_dim`) per layer."""
    kv_lora_rank: int = Field(default=0, ge=0)
    rope_dim: int = Field(default=0, ge=0)
    kv_layers: float = Field(gt=0)
    """Layers keeping KV for the whole context, weighted (a layer keeping one entry per r
    tokens counts 1/r; sliding-window and linear-attention layers count 0)."""
    kv_dtype_bytes: float = Field(default=DEFAULT_KV_DTYPE_BYTES, gt=0)
    total_params: float = Field(gt=0)
    active_params: float = Field(gt=0)
    expert_params: float = Field(default=0.0, ge=0)
    """One routed expert of one MoE layer."""
    experts: int = Field(default=0, ge=0)
    experts_per_token: int = Field(default=0, ge=0)
    moe_layers: int = Field(default=0, ge=0)
    moe_inter: int = Field(default=0, ge=0)
    """A routed expert's intermediate size."""
    weight_dtype: Dtype = "bf16"
    expert_dtype: Dtype | None = None
    """Routed experts' dtype when it differs (e.g. FP4 experts in an FP8 model)."""
    bytes_per_param: float | None = Field(default=None, gt=0)
    """Every weight's bytes when a model is quantised to a width of its own (e.g. 5.2 bits:
    0.65), overriding the dtypes' widths; compute still runs at `weight_dtype`."""
    max_context: int | None = None
    mtp_layers: int = Field(default=0, ge=0)
    """Multi-token-prediction layers the checkpoint ships (`num_nextn_predict_layers`): the
    draft of MTP speculative decoding."""
    compressed: CompressedKv | None = None
    """DeepSeek V4's compressed attention (its KV in SGLang's layout), None for others."""
    lm_head_params: float = Field(default=0.0, ge=0)
    """The output head's parameters when it is not tied to the embeddings (vocab x hidden)."""

    @property
    def kv_width(self) -> int:
        """KV elements per token per full layer."""
        if self.mla:
            return self.kv_lora_rank + self.rope_dim
        return 2 * self.kv_heads * self.head_dim

    def kv_bytes_per_token(self) -> float:
        """KV bytes one token occupies, whole model (before any tensor-parallel replication);
        compressed attention in its own layout (`CompressedKv`)."""
        if self.compressed is not None:
            return self.compressed.bytes_per_token()
        return self.kv_layers * self.kv_width * self.kv_dtype_bytes

    def kv_state_bytes(self, speculative: bool = False) -> float:
        """KV bytes a running request holds whatever its length (compressed attention's
        windows and state rings; 0 for others)."""
        if self.compressed is None:
            return 0.0
        return self.compressed.state_bytes(speculative)

    def expert_shape(self) -> ExpertShape | None:
        """The routed experts' shape (None for a dense model)."""
        if not self.experts or not self.moe_inter or not self.experts_per_token:
            return None
        return ExpertShape(
            hidden=self.hidden,
            inter=self.moe_inter,
            topk=self.experts_per_token,
            experts=self.experts,
        )

    def _routed_params(self) -> float:
        return self.expert_params * self.experts * self.moe_layers

    def _expert_width(self) -> float:
        return self.bytes_per_param or BYTES_PER_PARAM[self.expert_dtype or self.weight_dtype]

    def routed_weight_bytes(self) -> float:
        """Bytes of all routed experts."""
        return self._routed_params() * self._expert_width()

    def dense_weight_bytes(self) -> float:
        """Bytes of everything but the routed experts."""
        width = self.bytes_per_param or BYTES_PER_PARAM[self.weight_dtype]
        return (self.total_params - self._routed_params()) * width

    def lm_head_bytes(self) -> float:
        """Bytes of the output head (part of `dense_weight_bytes`)."""
        return self.lm_head_params * (self.bytes_per_param or BYTES_PER_PARAM[self.weight_dtype])

    def weight_bytes(self) -> float:
        """All weight bytes (one copy of the model)."""
        return self.dense_weight_bytes() + self.routed_weight_bytes()

    def attention_flops(self) -> float:
        """FLOPs per (query token, attended token) pair: QK^T and PV in every KV layer."""
        if self.mla:
            per_layer = self.heads * (2 * self.kv_lora_rank + self.rope_dim)
        else:
            per_layer = 2 * self.heads * self.head_dim
        return FLOPS_PER_MAC * per_layer * self.kv_layers

    def work(self, kv_replication: float = 1.0, data_parallel: int = 1) -> WorkModel:
        """The model's work per step of one rank: it holds `kv_replication` copies of each
        token's KV (e.g. MLA's latent on every tensor-parallel rank); with `data_parallel`
        attention ranks it holds 1/data_parallel of the routed experts, which serve the
        tokens of every rank."""
        return WorkModel(
            active_params=self.active_params,
            attention_flops=self.attention_flops(),
            dense_weight_bytes=self.dense_weight_bytes(),
            expert_bytes=self.expert_params * self._expert_width(),
            experts=self.experts,
            experts_per_token=self.experts_per_token,
            moe_layers=self.moe_layers,
            kv_bytes_per_token=self.kv_bytes_per_token() * kv_replication,
            expert_share=1.0 / data_parallel,
            peer_tokens=float(data_parallel),
        )


def _text(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's config (multimodal configs nest it as `text_config`)."""
    text = config.get("text_config")
    return {**config, **text} if isinstance(text, Mapping) else config


def _weight_dtypes(
    config: Mapping[str, Any], quant: Mapping[str, Any] | None
) -> tuple[Dtype, Dtype | None]:
    """(dtype of most weights, dtype of routed experts when different)."""
    qc = config.get("quantization_config") or {}
    method = str(qc.get("quant_method", "")).lower()
    base: Dtype = "fp8" if "fp8" in method else "bf16"
    if "fp4" in method:
        base = "fp4"
    expert: Dtype | None = None
    if str(config.get("expert_dtype", "")).lower() == "fp4":
        expert = "fp4"
    if quant is not None and "FP4" in json.dumps(quant).upper():
        expert = "fp4"
    if method == "compressed-tensors" and '"num_bits": 4' in json.dumps(qc):
        expert = "fp4"
    return base, (expert if expert != base else None)


KV_FREE_LAYER_TYPES = frozenset(
    {"sliding_attention", "linear_attention", "mamba", "moe", "mlp", "conv"}
)
"""Layer types that keep no per-token KV for the whole context (sliding windows and linear
or state-space layers keep a bounded state; MLP blocks keep none)."""


def _layer_count(config: Mapping[str, Any]) -> int:
    if config.get("num_hidden_layers"):
        return int(config["num_hidden_layers"])
    blocks = config.get("layers_block_type")
    if isinstance(blocks, list) and blocks:
        return sum(1 for b in blocks if b in ("attention", "mamba"))
    raise KeyError("num_hidden_layers")


def _compressed(config: Mapping[str, Any]) -> CompressedKv | None:
    """DeepSeek V4's compressed attention from its config (`compress_ratios` with an indexer),
    else None."""
    ratios = config.get("compress_ratios")
    if not (isinstance(ratios, list) and ratios and config.get("index_head_dim")):
        return None
    return CompressedKv(
        layers=len(ratios),
        csa_layers=sum(1 for r in ratios if r == CSA_RATIO),
        hca_layers=sum(1 for r in ratios if r == HCA_RATIO),
        window=int(config.get("sliding_window") or 0),
        head_dim=int(config["head_dim"]),
        rope_dim=int(config.get("qk_rope_head_dim") or 0),
        index_head_dim=int(config["index_head_dim"]),
    )


def _kv_layers(config: Mapping[str, Any], layers: int) -> float:
    """Full-context KV layers: all, or those `compress_ratios` / `layer_types` /
    `layers_block_type` (Nemotron-H) say keep per-token KV."""
    ratios = config.get("compress_ratios")
    if isinstance(ratios, list) and ratios:
        return sum(1.0 / r if r > 0 else 1.0 for r in ratios[:layers])
    types = config.get("layer_types")
    if isinstance(types, list) and types:
        return float(sum(1 for t in types[:layers] if t not in KV_FREE_LAYER_TYPES))
    blocks = config.get("layers_block_type")
    if isinstance(blocks, list) and blocks:
        return float(sum(1 for b in blocks if b == "attention"))
    pattern = config.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return float(pattern.count("*"))
    return float(layers)


def shape_from_config(
    name: str,
    config: Mapping[str, Any],
    quant: Mapping[str, Any] | None = None,
    *,
    kv_dtype_bytes: float = DEFAULT_KV_DTYPE_BYTES,
) -> ModelShape:
    """A model's spec from its HF `config.json` (and `hf_quant_config.json`, if any)."""
    c = _text(config)
    try:
        layers = _layer_count(c)
        hidden = int(c["hidden_size"])
        heads = int(c["num_attention_heads"])
        vocab = int(c["vocab_size"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"model config of {name} lacks a standard field: {exc}") from exc
    kv_heads = int(c.get("num_key_value_heads") or heads)
    head_dim = int(c.get("head_dim") or hidden // heads)
    kv_lora = int(c.get("kv_lora_rank") or 0)
    rope = int(c.get("qk_rope_head_dim") or 0)
    mla = kv_lora > 0
    q_lora = int(c.get("q_lora_rank") or 0)
    if mla:
        nope = int(c.get("qk_nope_head_dim") or head_dim)
        v_dim = int(c.get("v_head_dim") or head_dim)
        q_in = (
            hidden * q_lora + q_lora * heads * (nope + rope)
            if q_lora
            else hidden * heads * (nope + rope)
        )
        attention = q_in + hidden * (kv_lora + rope) + kv_lora * heads * (nope + v_dim)
        attention += heads * v_dim * hidden
    else:
        q_in = hidden * q_lora + q_lora * heads * head_dim if q_lora else hidden * heads * head_dim
        attention = q_in + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden
    experts = int(
        c.get("n_routed_experts") or c.get("num_local_experts") or c.get("num_experts") or 0
    )
    per_token = int(c.get("num_experts_per_tok") or c.get("experts_per_token") or 0)
    moe_inter = int(c.get("moe_intermediate_size") or c.get("intermediate_size") or 0)
    dense_inter = int(c.get("intermediate_size") or 0)
    shared_inter = int(c.get("shared_expert_intermediate_size") or 0) or moe_inter * int(
        c.get("n_shared_experts") or 0
    )
    dense_layers = min(layers, int(c.get("first_k_dense_replace") or 0)) if experts else layers
    moe_layers = layers - dense_layers if experts else 0
    blocks = c.get("layers_block_type")
    if isinstance(blocks, list) and blocks:  # Nemotron-H: attention, Mamba and MoE blocks
        moe_layers = sum(1 for b in blocks if b == "moe") if experts else 0
        dense_layers = 0
    activation = str(c.get("mlp_hidden_act") or c.get("hidden_act") or "silu")
    matrices = UNGATED_MLP_MATRICES if activation in UNGATED_ACTIVATIONS else GATED_MLP_MATRICES
    expert_width = int(c.get("moe_latent_size") or hidden)
    expert = matrices * expert_width * moe_inter if experts else 0
    shared = matrices * hidden * shared_inter
    dense_mlp = matrices * hidden * dense_inter
    embeddings = vocab * hidden * (1 if c.get("tie_word_embeddings") else 2)
    dtypes = _weight_dtypes(c, quant)
    total = (
        embeddings
        + layers * attention
        + dense_layers * dense_mlp
        + moe_layers * (experts * expert + shared + hidden * experts)
    )
    active = (
        vocab * hidden
        + layers * attention
        + dense_layers * dense_mlp
        + moe_layers * (per_token * expert + shared + hidden * experts)
    )
    kv_layers = _kv_layers(c, layers)
    compressed = _compressed(c)
    if kv_layers <= 0:
        raise InputError(f"model config of {name}: no layer keeps per-token KV")
    return ModelShape(
        name=name,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        mla=mla,
        kv_lora_rank=kv_lora,
        rope_dim=rope,
        kv_layers=kv_layers,
        kv_dtype_bytes=kv_dtype_bytes,
        total_params=float(total),
        active_params=float(active),
        expert_params=float(expert),
        experts=experts,
        experts_per_token=per_token,
        moe_layers=moe_layers,
        moe_inter=moe_inter if experts else 0,
        weight_dtype=dtypes[0],
        expert_dtype=dtypes[1],
        max_context=int(c["max_position_embeddings"]) if c.get("max_position_embeddings") else None,
        mtp_layers=int(c.get("num_nextn_predict_layers") or 0),
        compressed=compressed,
        lm_head_params=0.0 if c.get("tie_word_embeddings") else float(vocab * hidden),
    )


MODEL_SHAPES_KEPT = 256
"""Model shapes kept in memory once read (a few dozen models ship)."""
GENERATED_NAME = re.compile(r"^agentload-random-llama-(?P<layers>\d+)x(?P<hidden>\d+)$")
"""The name the local engine serves its generated model as (`engines.llamacpp.resolve_model`)."""


def generated_config(spec: model_gen.GeneratedModelSpec) -> dict[str, Any]:
    """The HF-style config of a model `agentload.engines.model_gen` writes (tied embeddings,
    gated SiLU MLP, GQA)."""
    return {
        "num_hidden_layers": spec.layers,
        "hidden_size": spec.hidden,
        "num_attention_heads": spec.heads,
        "num_key_value_heads": spec.kv_heads,
        "head_dim": spec.head_dim,
        "intermediate_size": spec.ffn,
        "vocab_size": spec.vocab_size,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "max_position_embeddings": spec.context,
    }


def _generated(hf_id: str) -> model_gen.GeneratedModelSpec | None:
    """The generator's spec behind a served name (other fields at their defaults)."""
    found = GENERATED_NAME.match(hf_id)
    if found is None:
        return None
    return model_gen.GeneratedModelSpec(layers=int(found["layers"]), hidden=int(found["hidden"]))


def _config_dirs() -> list[Path]:
    dirs = [Path(str(resources.files("agentload.sim") / "data" / "models"))]
    try:
        import aiconfigurator_core

        dirs.insert(0, Path(aiconfigurator_core.__file__).parent / "model_configs")
    except ImportError:
        pass
    return dirs


def known_models() -> list[str]:
    """HF ids whose config is at hand (aiconfigurator-core's, then the shipped ones)."""
    names: set[str] = set()
    for folder in _config_dirs():
        for path in folder.glob("*_config.json"):
            if not path.name.endswith("_hf_quant_config.json"):
                names.add(path.name.removesuffix("_config.json").replace("--", "/", 1))
    return sorted(names)


@functools.lru_cache(maxsize=MODEL_SHAPES_KEPT)
def model_shape(hf_id: str, *, kv_dtype_bytes: float = DEFAULT_KV_DTYPE_BYTES) -> ModelShape:
    """The spec of a model known by its HF id (see `known_models`), or of the local engine's
    generated model by the name it is served as. Kept once read (a frozen shape of files that
    ship with agentload: `simulate --list` asks for each of 4,943 deployments' models)."""
    generated = _generated(hf_id)
    if generated is not None:
        return shape_from_config(hf_id, generated_config(generated), kv_dtype_bytes=kv_dtype_bytes)
    stem = hf_id.replace("/", "--", 1)
    for folder in _config_dirs():
        path = folder / f"{stem}_config.json"
        if path.is_file():
            config = json.loads(path.read_text())
            quant_path = folder / f"{stem}_hf_quant_config.json"
            quant = json.loads(quant_path.read_text()) if quant_path.is_file() else None
            return shape_from_config(hf_id, config, quant, kv_dtype_bytes=kv_dtype_bytes)
    raise InputError(
        f"no config for model {hf_id!r}; known: {', '.join(known_models()[:8])} ...",
        field="--model",
    )
