"""The models the importers are tested on: Hugging Face ``transformers`` models built from small configs and
``timm`` models with ``pretrained=False`` (random weights; nothing is downloaded), each with example inputs and
torch.export dynamic dims.

Decoders declare a dynamic sequence only: transformers' causal-mask construction over a dynamic batch *and* sequence
meets a limit of XLA's dynamic padder in the bounded programs ("Dynamic dimension propagation on DynamicSlice where a
partial dimension is selected"), and tp.compile then falls back to a program per shape."""

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

VOCAB = 512
TEXT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=VOCAB)
DECODER = dict(TEXT, num_key_value_heads=2, use_cache=False)
IMAGE = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32, patch_size=8
)


@dataclass
class Case:
    build: Callable[[], Any]
    kind: str  # "text" (token ids [batch, seq]) or "image" ([batch, 3, size, size])
    size: int = 32  # the image size
    dynamic_batch: bool = True

    def inputs(self, torch: Any, batch: int, seq: int) -> Tuple[Any, ...]:
        rng = np.random.default_rng(batch * 1000 + seq)
        if self.kind == "text":
            return (torch.from_numpy(rng.integers(0, VOCAB, (batch, seq))),)
        return (torch.from_numpy(rng.standard_normal((batch, 3, self.size, self.size)).astype(np.float32)),)

    def dynamic_shapes(self, torch: Any) -> Any:
        batch = torch.export.Dim("batch", min=1, max=4)
        if self.kind == "text":
            seq = torch.export.Dim("seq", min=2, max=32)
            return ({0: batch, 1: seq} if self.dynamic_batch else {1: seq},)
        return ({0: batch},)

    def call_sizes(self) -> List[Tuple[int, int]]:
        """(batch, seq) at the declared range's ends and inside it."""
        if self.kind == "image":
            return [(1, 0), (3, 0), (4, 0)]
        return [(1, 2), (3, 17), (4, 32)] if self.dynamic_batch else [(2, 2), (2, 17), (2, 32)]


def _hf(config: str, model: str, **kw: Any) -> Callable[[], Any]:
    def build() -> Any:
        import transformers

        return getattr(transformers, model)(getattr(transformers, config)(**kw))

    return build


def _timm(name: str, **kw: Any) -> Callable[[], Any]:
    def build() -> Any:
        import timm

        return timm.create_model(name, pretrained=False, **kw)

    return build


CONVNET = dict(num_channels=3, embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1])

TORCH_ZOO: Dict[str, Case] = {
    # encoders
    "bert": Case(_hf("BertConfig", "BertModel", **TEXT), "text"),
    "distilbert": Case(
        _hf("DistilBertConfig", "DistilBertModel", dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=VOCAB),
        "text",
    ),
    "roberta": Case(_hf("RobertaConfig", "RobertaModel", **TEXT), "text"),
    "albert": Case(_hf("AlbertConfig", "AlbertModel", embedding_size=16, **TEXT), "text"),
    "electra": Case(_hf("ElectraConfig", "ElectraModel", embedding_size=16, **TEXT), "text"),
    "bert_classifier": Case(_hf("BertConfig", "BertForSequenceClassification", num_labels=3, **TEXT), "text"),
    # decoders
    "gpt2": Case(
        _hf("GPT2Config", "GPT2LMHeadModel", n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB, use_cache=False),
        "text",
        dynamic_batch=False,
    ),
    "llama": Case(_hf("LlamaConfig", "LlamaForCausalLM", **DECODER), "text", dynamic_batch=False),
    "mistral": Case(_hf("MistralConfig", "MistralModel", **DECODER), "text", dynamic_batch=False),
    "qwen2": Case(_hf("Qwen2Config", "Qwen2Model", **DECODER), "text", dynamic_batch=False),
    "opt": Case(
        _hf(
            "OPTConfig",
            "OPTModel",
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            ffn_dim=64,
            word_embed_proj_dim=32,
            vocab_size=VOCAB,
            use_cache=False,
        ),
        "text",
        dynamic_batch=False,
    ),
    "phi": Case(_hf("PhiConfig", "PhiModel", **DECODER), "text", dynamic_batch=False),
    "gemma": Case(_hf("GemmaConfig", "GemmaModel", head_dim=8, **DECODER), "text", dynamic_batch=False),
    # vision transformers
    "vit": Case(_hf("ViTConfig", "ViTModel", **IMAGE), "image"),
    "deit": Case(_hf("DeiTConfig", "DeiTModel", **IMAGE), "image"),
    "vit_classifier": Case(_hf("ViTConfig", "ViTForImageClassification", num_labels=5, **IMAGE), "image"),
    # convnets
    "resnet": Case(_hf("ResNetConfig", "ResNetModel", **CONVNET), "image"),
    "convnext": Case(
        _hf("ConvNextConfig", "ConvNextModel", hidden_sizes=[16, 32], depths=[1, 1], num_stages=2), "image"
    ),
    "regnet": Case(
        _hf("RegNetConfig", "RegNetModel", embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8),
        "image",
    ),
    "mobilenet_v2": Case(_hf("MobileNetV2Config", "MobileNetV2Model", depth_multiplier=0.35, image_size=32), "image"),
    # timm
    "timm_resnet18": Case(_timm("resnet18", num_classes=10), "image"),
    "timm_efficientnet_b0": Case(_timm("efficientnet_b0", num_classes=10), "image"),
    "timm_mobilenetv3": Case(_timm("mobilenetv3_small_050", num_classes=10), "image"),
    "timm_convnext_atto": Case(_timm("convnext_atto", num_classes=10), "image"),
    "timm_vit_tiny": Case(_timm("vit_tiny_patch16_224", img_size=32, patch_size=8, num_classes=10), "image"),
    "timm_deit_tiny": Case(_timm("deit_tiny_patch16_224", img_size=32, patch_size=8, num_classes=10), "image"),
}
