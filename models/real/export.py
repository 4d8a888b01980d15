#!/usr/bin/env python3
"""Export real model architectures as weightless TorchScript files, each with a YAML manifest.

    "$(ci/torch_python.sh)" models/real/export.py --out DIR [--set smoke|all] [--only NAME[,NAME...]]
                                           [--list]

For every architecture of the chosen set (the table ARCHITECTURES below) this writes

    DIR/<name>.pt     TorchScript (torch.jit.script, or torch.jit.trace with autograd on) in eval
                      mode, weights stripped: see Note [Weightless files]
    DIR/<name>.yaml   the manifest the C++ side reads: inputs, size configs, dtypes, golden dtype,
                      custom-op libraries, how to compare each output; see write_manifest()

and DIR/export-report.txt, one line per model: `name  ok|FAILED  seconds  reason`.

Every model is built with random initialisation (weights=None: nothing is downloaded), exported,
stripped, saved, then checked from the saved file (check()); a model that fails is reported and
the others go on. DIR/.stamp caches exports by content: while it matches this file's bytes and
the library versions, a model whose .pt and .yaml exist is skipped.

Needs the torch environment's Python (ci/torch_python.sh: torch 2.x with torchvision and
torchaudio, as ci/setup.sh installs them). Runs on one CPU thread, one model at a time.

Note [Weightless files]
Every parameter and every floating buffer named running_mean or running_var is replaced by an
expanded 0-d zero of its dtype and shape, torch.zeros((), dtype).expand(shape), so a file holds the
graph and the small fixed tensors only (integer buffers such as relative_position_index, and
floating tables such as positional encodings, windows and anchors, keep their data). A tensor held
by several slots (tied weights, an RNN's _flat_weights list) stays one shared tensor. The file
carries gauntlet/weightless.json, one record per replaced tensor, in slot order:

    {"format": 1, "tensors": [{"path": "layer1.0.conv1.weight", "shape": [64, 64, 3, 3],
      "dtype": "float32", "mean": m, "std": s, "fan_in": f, "kind": "parameter"|"buffer"}, ...]}

path is the tensor's first dotted attribute path from the root module; mean and std (population)
are those of the random-init tensor (std 0 when it is constant); fan_in is numel/shape[0] for
tensors of 2 or more dims, else 0. A loader refills each recorded tensor by this rule, which the
C++ loader implements too (refill_value() here):
    std > 0                        uniform on mean -+ sqrt(3)*std
    std == 0, >= 2 dims            uniform on -+1/sqrt(fan_in)      (ViT's zero-initialised head)
    std == 0, < 2 dims, mean == 0  uniform on -+0.1                 (biases, running_mean)
    std == 0, < 2 dims, mean != 0  uniform on mean -+ 0.1*|mean|    (norm scales, running_var)
Goldens are outputs of the refilled model, so check() judges that model's outputs.
"""

import argparse
import dataclasses
import gc
import hashlib
import json
import math
import os
import re
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torchaudio
import torchvision
import yaml

# Trace and script warnings (TracerWarning, deprecations) are noise here: check() runs every
# config of the saved file against the eager model, which catches a trace that specialised.
warnings.filterwarnings("ignore")

VERSIONS = {"torch": torch.__version__, "torchvision": torchvision.__version__,
            "torchaudio": torchaudio.__version__}
DTYPES = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16}
CUSTOM_OP_LIBRARIES = ("torchvision", "torchaudio")
STATISTIC_BUFFERS = ("running_mean", "running_var")
# Fused CPU inference kernels that tracing under no_grad bakes in (REAL-MODELS-NOTES.md): a traced
# graph must not hold them. A scripted one may, in a fast-path branch taken under no_grad on CPU.
FUSED_INFERENCE_OPS = ("aten::_native_multi_head_attention",
                       "aten::_transformer_encoder_layer_fwd", "aten::_nested_tensor_from_mask")
SIZE_LIMIT_MB = 2.0
DEGENERATE_MAX_ABS = 1e-6
FIDELITY_TOLERANCE = 1e-3   # saved file vs eager model, relative to max |eager|
INSENSITIVE_BELOW = 1e-3    # two inputs' outputs differing by less (relative) get a note
EXPLODING_ABOVE = 1e6       # outputs larger than this get a note
WEIGHTLESS_JSON = "gauntlet/weightless.json"


# -------------------------------------------------------------------------------------------------
# Models written here, for families torchvision and torchaudio lack

class TransformerClassifier(nn.Module):
    """Token classifier: embedding and learned positions, nn.TransformerEncoder, mean pool, head."""

    def __init__(self, vocab=1000, dim=256, heads=4, ffn=1024, layers=4, classes=10, max_len=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.randn(max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, ffn, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.positions[: tokens.shape[1]]
        return self.head(self.norm(self.encoder(x)).mean(dim=1))


class LSTMLanguageModel(nn.Module):
    """Word-level LSTM LM as in PyTorch's word_language_model example; decoder tied to embedding."""

    def __init__(self, vocab=10000, dim=256, layers=2, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, layers, dropout=dropout, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)
        self.decoder.weight = self.embed.weight
        nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.drop(self.embed(tokens)))
        return self.decoder(self.drop(out))


class GRUFrameClassifier(nn.Module):
    """Per-frame classifier over filterbank features: a 2-layer bidirectional GRU and a head."""

    def __init__(self, features=40, hidden=256, layers=2, classes=48):
        super().__init__()
        self.gru = nn.GRU(features, hidden, layers, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(frames)
        return self.head(out)


class TransformerSeq2Seq(nn.Module):
    """Small translation model: nn.Transformer, sinusoidal positions, a causal target mask."""

    def __init__(self, vocab=1000, dim=256, heads=4, layers=3, ffn=1024, max_len=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.transformer = nn.Transformer(dim, heads, layers, layers, ffn, dropout=0.1,
                                          batch_first=True)
        self.out = nn.Linear(dim, vocab)
        self.scale = math.sqrt(dim)
        position = torch.arange(max_len).unsqueeze(1)
        frequency = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
        table = torch.zeros(max_len, dim)
        table[:, 0::2] = torch.sin(position * frequency)
        table[:, 1::2] = torch.cos(position * frequency)
        self.register_buffer("positions", table)   # a fixed floating table: keeps its data

    def encode(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.embed(tokens) * self.scale + self.positions[: tokens.shape[1]]

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        n = target.shape[1]
        causal = torch.ones(n, n, dtype=torch.bool, device=target.device).triu(1)
        decoded = self.transformer(self.encode(source), self.encode(target), tgt_mask=causal)
        return self.out(decoded)


def mlp(dim: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, token_hidden, channel_hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = mlp(tokens, token_hidden)
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = mlp(dim, channel_hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class MLPMixer(nn.Module):
    """MLP-Mixer (Tolstikhin et al. 2021), a small one: 16x16 patches of a 224x224 image."""

    def __init__(self, image=224, patch=16, dim=512, depth=8, token_hidden=256,
                 channel_hidden=2048, classes=1000):
        super().__init__()
        tokens = (image // patch) ** 2
        self.stem = nn.Conv2d(3, dim, patch, stride=patch)
        self.blocks = nn.Sequential(
            *[MixerBlock(tokens, dim, token_hidden, channel_hidden) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x).flatten(2).transpose(1, 2)
        return self.head(self.norm(self.blocks(x)).mean(dim=1))


class DetectionOnBatch(nn.Module):
    """A torchvision detector, whose forward takes List[Tensor], taking one [N, 3, H, W] batch.

    Returns the per-image detection dicts (scripted detectors return (losses, detections))."""

    def __init__(self, detector: nn.Module):
        super().__init__()
        self.detector = detector

    def forward(self, images: torch.Tensor) -> List[Dict[str, torch.Tensor]]:
        if torch.jit.is_scripting():
            return self.detector(images.unbind(0))[1]
        return self.detector(list(images.unbind(0)))


class DeterministicPrenet(torchaudio.models.tacotron2._Prenet):
    """Tacotron2's prenet keeps dropout on at inference (training=True); a golden needs it off."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for linear in self.layers:
            x = nn.functional.dropout(nn.functional.relu(linear(x)), 0.5, self.training)
        return x


def deterministic_tacotron2(**kwargs) -> nn.Module:
    model = torchaudio.models.Tacotron2(**kwargs)
    model.decoder.prenet.__class__ = DeterministicPrenet
    return model


# -------------------------------------------------------------------------------------------------
# The table

@dataclasses.dataclass(frozen=True)
class Arch:
    name: str                       # lowercase letters, digits, underscore
    build: Callable[[], nn.Module]  # a fresh randomly initialised model
    call: str                       # what build() does, for the manifest's description
    source: str                     # torch | torchvision | torchaudio
    export: str                     # script | trace
    task: str
    tags: Tuple[str, ...]
    inputs: Tuple[dict, ...]        # in forward()'s order, in the manifest's syntax
    configs: Dict[str, dict]        # config name -> sizes; the first is the default, the smallest
    outputs: Tuple[Tuple[str, str], ...] = (("out", "scaled"),)  # (name, compare), flattened
    smoke: bool = False             # in the fast CI subset
    note: str = ""                  # how it departs from the library's default, for the manifest
    rescale: bool = False           # rescale_to_unit_activations() before export


def builder(module, function: str, **kwargs) -> Tuple[Callable[[], nn.Module], str]:
    """A build function and its description, e.g. 'torchvision.models.resnet18(weights=None)'."""
    arguments = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    build = lambda: getattr(module, function)(**kwargs)
    return build, f"{module.__name__}.{function}({arguments})"


def local(cls, **kwargs) -> Tuple[Callable[[], nn.Module], str]:
    arguments = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return (lambda: cls(**kwargs)), f"{cls.__name__}({arguments}) from models/real/export.py"


IMAGE = ({"name": "x", "shape": ["batch", 3, "h", "w"], "range": [-1, 1]},)
VIDEO = ({"name": "x", "shape": ["batch", 3, "frames", "h", "w"], "range": [-1, 1]},)
WAVE = ({"name": "waveform", "shape": ["batch", 1, "samples"], "range": [-1, 1]},)
WAVE_LENGTHS = ({"name": "waveforms", "shape": ["batch", "samples"], "range": [-1, 1]},
                {"name": "lengths", "shape": ["batch"], "dtype": "int64", "fill": "samples"})
TOKENS = {"name": "tokens", "shape": ["batch", "seq"], "dtype": "int64", "bound": 1000}
SECOND = {"b1": {"batch": 1, "samples": 16000}, "b2": {"batch": 2, "samples": 16000}}
LOGITS = (("logits", "topk"),)
CONV, DEPTHWISE, ATTENTION, TRANSFORMER = "conv", "depthwise", "attention", "transformer"


def features(dim: int, frames: str = "frames") -> Tuple[dict, ...]:
    """Frame features and their lengths (every sequence full length)."""
    return ({"name": "features", "shape": ["batch", frames, dim], "range": [-1, 1]},
            {"name": "lengths", "shape": ["batch"], "dtype": "int64", "fill": "frames"})


def images(size: int) -> Dict[str, dict]:
    return {"b1": {"batch": 1, "h": size, "w": size}, "b2": {"batch": 2, "h": size, "w": size}}


def classifier(name: str, export: str, tags, size=224, smoke=False, rescale=False,
               **kwargs) -> Arch:
    build, call = builder(torchvision.models, name, weights=None, **kwargs)
    return Arch(name, build, call, "torchvision", export, "image-classification",
                ("vision", "classification", *tags), IMAGE, images(size), LOGITS, smoke,
                rescale=rescale)


def segmentation(name: str, tags, rescale=False, **kwargs) -> Arch:
    build, call = builder(torchvision.models.segmentation, name, weights=None,
                          weights_backbone=None, **kwargs)
    return Arch(name, build, call, "torchvision", "script", "segmentation",
                ("vision", "segmentation", "upsample", *tags), IMAGE,
                {"b1": {"batch": 1, "h": 224, "w": 224}, "b2": {"batch": 2, "h": 160, "w": 224}},
                rescale=rescale)


def detection(name: str, tags, outputs=("boxes", "labels", "scores"), **kwargs) -> Arch:
    """Batch 1 only: the result has three or more tensors per image."""
    make, call = builder(torchvision.models.detection, name, weights=None,
                         weights_backbone=None, **kwargs)
    return Arch(name, lambda: DetectionOnBatch(make()), call, "torchvision", "script",
                "detection", ("vision", "detection", "nms", *tags), IMAGE,
                {"square": {"batch": 1, "h": 320, "w": 320},
                 "wide": {"batch": 1, "h": 240, "w": 320}},
                tuple((output, "skip") for output in outputs),
                note="wrapped by DetectionOnBatch: takes one [1, 3, h, w] tensor")


def video(name: str, export: str, frames: int, size: int, tags, rescale=False) -> Arch:
    build, call = builder(torchvision.models.video, name, weights=None)
    return Arch(name, build, call, "torchvision", export, "video", ("vision", "video", *tags),
                VIDEO, {"b1": {"batch": 1, "frames": frames, "h": size, "w": size}}, LOGITS,
                rescale=rescale)


def raft(name: str) -> Arch:
    """Scripted: a trace bakes the device of RAFT's coordinate grids."""
    build, call = builder(torchvision.models.optical_flow, name, weights=None)
    image = {"shape": ["batch", 3, "h", "w"], "range": [-1, 1]}
    return Arch(name, build, call, "torchvision", "script", "optical-flow",
                ("vision", "optical-flow", "grid-sample", "recurrent"),
                ({"name": "image1", **image}, {"name": "image2", **image}),
                {"b1": {"batch": 1, "h": 128, "w": 128}, "wide": {"batch": 1, "h": 128, "w": 192}},
                tuple((f"flow{i}", "scaled") for i in range(12)))  # one per update, 12 by default


def audio(name: str, export: str, task: str, tags, inputs, configs, outputs=(("out", "scaled"),),
          function=None, make=None, smoke=False, note="", rescale=False, **kwargs) -> Arch:
    """function: the torchaudio.models builder or class (default: name); make: a patched one."""
    build, call = builder(torchaudio.models, function or name, **kwargs)
    if make:
        build = lambda: make(**kwargs)
    return Arch(name, build, call, "torchaudio", export, task, ("audio", *tags), inputs, configs,
                outputs, smoke, note, rescale)


ARCHITECTURES: List[Arch] = [
    # -- image classification (torchvision): traced ones call aten::_convolution, scripted conv2d.
    #    rescale=True: without it the logits hardly depend on the input (see the function)
    classifier("resnet18", "trace", [CONV, "residual"], smoke=True),
    classifier("resnet34", "script", [CONV, "residual"]),
    classifier("resnet50", "trace", [CONV, "residual", "bottleneck"]),
    classifier("resnext50_32x4d", "script", [CONV, "residual", "grouped"]),
    classifier("wide_resnet50_2", "script", [CONV, "residual", "bottleneck"]),
    classifier("mobilenet_v2", "script", [CONV, DEPTHWISE], smoke=True, rescale=True),
    classifier("mobilenet_v3_small", "script", [CONV, DEPTHWISE, "squeeze-excite", "hardswish"],
               rescale=True),
    classifier("mobilenet_v3_large", "trace", [CONV, DEPTHWISE, "squeeze-excite", "hardswish"],
               rescale=True),
    classifier("efficientnet_b0", "trace", [CONV, DEPTHWISE, "squeeze-excite", "silu"],
               rescale=True),
    classifier("efficientnet_b1", "script", [CONV, DEPTHWISE, "squeeze-excite", "silu"],
               size=240, rescale=True),
    classifier("efficientnet_v2_s", "script", [CONV, DEPTHWISE, "squeeze-excite", "silu"],
               rescale=True),
    classifier("regnet_x_400mf", "script", [CONV, "grouped"]),
    classifier("regnet_y_400mf", "trace", [CONV, "grouped", "squeeze-excite"]),
    classifier("regnet_y_800mf", "script", [CONV, "grouped", "squeeze-excite"]),
    classifier("convnext_tiny", "trace", [CONV, DEPTHWISE, "layernorm", "gelu"]),
    classifier("vit_b_16", "trace", [TRANSFORMER, ATTENTION, "layernorm", "gelu"]),
    classifier("vit_b_32", "script", [TRANSFORMER, ATTENTION, "layernorm", "gelu"]),
    # Swin is scripted: a trace bakes the device of its shifted-window attention masks
    classifier("swin_t", "script", [TRANSFORMER, ATTENTION, "window", "layernorm"]),
    classifier("swin_v2_t", "script", [TRANSFORMER, ATTENTION, "window", "layernorm"]),
    classifier("maxvit_t", "trace", [TRANSFORMER, ATTENTION, CONV, DEPTHWISE, "window"],
               rescale=True),
    classifier("densenet121", "trace", [CONV, "concat"]),
    classifier("shufflenet_v2_x0_5", "script", [CONV, DEPTHWISE, "channel-shuffle"], smoke=True,
               rescale=True),
    classifier("shufflenet_v2_x1_0", "trace", [CONV, DEPTHWISE, "channel-shuffle"], rescale=True),
    classifier("squeezenet1_0", "trace", [CONV, "concat"]),
    classifier("squeezenet1_1", "script", [CONV, "concat"]),
    classifier("vgg11_bn", "trace", [CONV, "batchnorm"]),
    classifier("alexnet", "script", [CONV]),
    # traced: scripted, these two return a namedtuple holding None for the disabled aux outputs
    classifier("inception_v3", "trace", [CONV, "concat"], size=299, rescale=True,
               aux_logits=False, init_weights=True),
    classifier("googlenet", "trace", [CONV, "concat"], rescale=True, aux_logits=False,
               init_weights=True),
    classifier("mnasnet0_5", "script", [CONV, DEPTHWISE], rescale=True),
    classifier("mnasnet1_0", "trace", [CONV, DEPTHWISE], rescale=True),

    # -- segmentation (torchvision; the result is {"out": ...})
    segmentation("fcn_resnet50", [CONV, "dilated"], aux_loss=False),
    segmentation("deeplabv3_resnet50", [CONV, "dilated", "aspp"], aux_loss=False),
    segmentation("deeplabv3_mobilenet_v3_large", [CONV, DEPTHWISE, "aspp"], rescale=True,
                 aux_loss=False),
    segmentation("lraspp_mobilenet_v3_large", [CONV, DEPTHWISE]),

    # -- detection (torchvision, scripted). Random weights score every class alike, below the
    #    default score thresholds: thresholds of 0 keep boxes coming. The resnet50 ones resize
    #    images to 320 pixels instead of 800, to stay CPU-reasonable.
    detection("fasterrcnn_mobilenet_v3_large_320_fpn", [CONV, DEPTHWISE, "roi-align"],
              box_score_thresh=0.0),
    detection("fasterrcnn_resnet50_fpn", [CONV, "roi-align"], min_size=320, max_size=320,
              box_score_thresh=0.0),
    detection("retinanet_resnet50_fpn", [CONV], min_size=320, max_size=320),
    detection("fcos_resnet50_fpn", [CONV], min_size=320, max_size=320, score_thresh=0.0),
    detection("ssdlite320_mobilenet_v3_large", [CONV, DEPTHWISE]),
    detection("ssd300_vgg16", [CONV]),
    detection("maskrcnn_resnet50_fpn", [CONV, "roi-align", "slow"],
              ("boxes", "labels", "scores", "masks"),
              min_size=320, max_size=320, box_score_thresh=0.0),
    detection("keypointrcnn_resnet50_fpn", [CONV, "roi-align", "slow"],
              ("boxes", "labels", "scores", "keypoints", "keypoints_scores"),
              min_size=320, max_size=320, box_score_thresh=0.0),

    # -- video classification (torchvision)
    video("r3d_18", "trace", 8, 112, [CONV, "conv3d"]),
    video("mc3_18", "script", 8, 112, [CONV, "conv3d"]),
    video("r2plus1d_18", "script", 8, 112, [CONV, "conv3d"]),
    video("s3d", "trace", 16, 224, [CONV, "conv3d", "max-pool3d"], rescale=True),  # 2x7x7 pool
    video("mvit_v2_s", "script", 16, 224, [TRANSFORMER, ATTENTION, "conv3d", "slow"]),

    # -- optical flow (torchvision)
    raft("raft_small"),
    raft("raft_large"),

    # -- audio (torchaudio)
    audio("wav2letter", "trace", "speech-recognition", [CONV, "conv1d"], WAVE, SECOND,
          function="Wav2Letter", smoke=True, rescale=True, num_classes=40, input_type="waveform",
          num_features=1),
    audio("conv_tasnet_base", "trace", "audio", [CONV, "conv1d", "separation"], WAVE,
          {"b1": {"batch": 1, "samples": 8000}, "b2": {"batch": 2, "samples": 8000}},
          num_sources=2),
    audio("hdemucs_low", "trace", "audio", [CONV, "stft", "separation"],   # does not script
          ({"name": "mixture", "shape": ["batch", 2, "samples"], "range": [-1, 1]},),
          {"b1": {"batch": 1, "samples": 16000}}, sources=["drums", "bass", "other", "vocals"]),
    audio("conformer", "script", "speech-recognition", [TRANSFORMER, ATTENTION, CONV, DEPTHWISE],
          features(80), {"b1": {"batch": 1, "frames": 100}, "b2": {"batch": 2, "frames": 100}},
          (("out", "scaled"), ("lengths", "scaled")), function="Conformer", input_dim=80,
          num_heads=4, ffn_dim=256, num_layers=4, depthwise_conv_kernel_size=31),
    audio("emformer", "script", "speech-recognition", [TRANSFORMER, ATTENTION, "streaming"],
          features(512, "input_frames"),    # input_frames: frames and 1 right-context frame
          {"b1": {"batch": 1, "frames": 128, "input_frames": 129},
           "b2": {"batch": 2, "frames": 128, "input_frames": 129}},
          (("out", "scaled"), ("lengths", "scaled")), function="Emformer", input_dim=512,
          num_heads=8, ffn_dim=2048, num_layers=20, segment_length=4, right_context_length=1),
    audio("wav2vec2_base", "script", "speech-recognition", [TRANSFORMER, ATTENTION, CONV],
          WAVE_LENGTHS, SECOND, (("features", "scaled"), ("lengths", "scaled"))),
    audio("hubert_base", "script", "speech-recognition", [TRANSFORMER, ATTENTION, CONV],
          WAVE_LENGTHS, SECOND, (("features", "scaled"), ("lengths", "scaled"))),
    audio("deepspeech", "trace", "speech-recognition", ["rnn"],   # scripting fails on hardtanh
          ({"name": "spectrogram", "shape": ["batch", 1, "frames", 161], "range": [-1, 1]},),
          {"b1": {"batch": 1, "frames": 100}, "b2": {"batch": 2, "frames": 100}},
          function="DeepSpeech", n_feature=161),
    audio("wavernn", "script", "audio", ["rnn", "gru", CONV, "vocoder", "slow"],
          ({"name": "waveform", "shape": ["batch", 1, "samples"], "range": [-1, 1]},
           {"name": "specgram", "shape": ["batch", 1, 128, "frames"], "range": [-1, 1]}),
          {"b1": {"batch": 1, "frames": 20, "samples": 3200}},  # samples = (frames - 4) * 200
          function="WaveRNN", upsample_scales=[5, 5, 8], n_classes=256, hop_length=200),
    audio("tacotron2", "script", "audio", ["rnn", "lstm", ATTENTION, "tts"],
          ({**TOKENS, "shape": ["batch", "tokens"], "bound": 148},
           {"name": "token_lengths", "shape": ["batch"], "dtype": "int64", "fill": "tokens"},
           {"name": "mel", "shape": ["batch", 80, "frames"], "range": [-1, 1]},
           {"name": "mel_lengths", "shape": ["batch"], "dtype": "int64", "fill": "frames"}),
          {"b1": {"batch": 1, "tokens": 20, "frames": 40}},
          tuple((o, "scaled") for o in ("mel", "mel_postnet", "gate", "alignments")),
          function="Tacotron2", make=deterministic_tacotron2,
          note="the prenet's dropout follows eval mode (DeterministicPrenet)"),
    audio("emformer_rnnt_base", "script", "speech-recognition",
          [TRANSFORMER, ATTENTION, "lstm", "rnnt"],
          (features(80)[0], {**features(80)[1], "name": "feature_lengths"},
           {**TOKENS, "name": "targets", "shape": ["batch", "targets"], "bound": 4097},
           {"name": "target_lengths", "shape": ["batch"], "dtype": "int64", "fill": "targets"}),
          {"b1": {"batch": 1, "frames": 84, "targets": 10}},
          (("joint", "scaled"), ("source_lengths", "scaled"), ("target_lengths", "scaled"))
          + tuple((f"lstm{i}_{state}", "scaled") for i in range(3) for state in "hc"),
          num_symbols=4097),

    # -- torch.nn models written above
    Arch("transformer_classifier", *local(TransformerClassifier), "torch", "trace", "sequence",
         (TRANSFORMER, ATTENTION, "embedding", "layernorm"), (TOKENS,),
         {"b2": {"batch": 2, "seq": 64}, "b4": {"batch": 4, "seq": 128}}, LOGITS, smoke=True),
    Arch("lstm_lm", *local(LSTMLanguageModel), "torch", "script", "language-model",
         ("rnn", "lstm", "embedding", "tied-weights"), ({**TOKENS, "bound": 10000},),
         {"b2": {"batch": 2, "seq": 32}, "b4": {"batch": 4, "seq": 64}},
         (("logits", "scaled"),), smoke=True),
    Arch("gru_frame_classifier", *local(GRUFrameClassifier), "torch", "script", "sequence",
         ("rnn", "gru", "bidirectional"),
         ({"name": "frames", "shape": ["batch", "seq", 40], "range": [-1, 1]},),
         {"b2": {"batch": 2, "seq": 50}, "b4": {"batch": 4, "seq": 100}},
         (("logits", "scaled"),), smoke=True),
    Arch("transformer_seq2seq", *local(TransformerSeq2Seq), "torch", "script", "sequence",
         (TRANSFORMER, ATTENTION, "embedding", "encoder-decoder"),
         ({**TOKENS, "name": "source", "shape": ["batch", "source_len"]},
          {**TOKENS, "name": "target", "shape": ["batch", "target_len"]}),
         {"b2": {"batch": 2, "source_len": 32, "target_len": 24},
          "b4": {"batch": 4, "source_len": 64, "target_len": 48}},
         (("logits", "scaled"),), note="scripted: a trace bakes the causal mask's device"),
    Arch("mlp_mixer", *local(MLPMixer), "torch", "trace", "image-classification",
         ("vision", "classification", "mlp", "layernorm", "gelu"), IMAGE, images(224), LOGITS),
]

SETS = {"all": ARCHITECTURES, "smoke": [a for a in ARCHITECTURES if a.smoke]}
TASKS = ("image-classification", "segmentation", "detection", "video", "optical-flow", "audio",
         "speech-recognition", "language-model", "sequence")
COMPARES = ("scaled", "topk", "cosine", "skip")


def validate_table() -> None:
    """Catch table mistakes before exporting anything."""
    names = [a.name for a in ARCHITECTURES]
    assert len(names) == len(set(names)), "duplicate names"
    for a in ARCHITECTURES:
        assert re.fullmatch(r"[a-z0-9_]+", a.name), a.name
        assert a.export in ("script", "trace") and a.task in TASKS, a.name
        assert all(compare in COMPARES for _, compare in a.outputs), a.name
        for sizes in a.configs.values():
            for spec in a.inputs:
                used = [d for d in spec["shape"] if isinstance(d, str)]
                used.append(spec.get("fill", "batch"))
                assert all(d in sizes for d in used), f"{a.name}: {spec['name']} lacks a size"


# -------------------------------------------------------------------------------------------------
# Tensor slots of a ScriptModule: parameters, buffers, other tensor attributes, tensor lists

@dataclasses.dataclass
class Slot:
    path: str       # dotted attribute path from the root module
    owner: torch.jit.ScriptModule
    attr: str
    value: object   # a Tensor, or a list of Tensors when kind is "list"
    kind: str       # parameter | buffer | attribute | list


def tensor_slots(module: torch.jit.ScriptModule) -> List[Slot]:
    """Every tensor and tensor-list attribute of module and its submodules, root first."""
    slots = []
    for prefix, submodule in module.named_modules():
        # The C++ module lists every attribute, tensor lists (an RNN's _flat_weights) included.
        iterators = torch._C._jit_debug_module_iterators(submodule._c)
        parameters = {name for name, _ in iterators["named_parameters"]}
        buffers = {name for name, _ in iterators["named_buffers"]}
        for attr, value in iterators["named_attributes"]:
            path = f"{prefix}.{attr}" if prefix else attr
            if isinstance(value, torch.Tensor):
                kind = ("parameter" if attr in parameters else
                        "buffer" if attr in buffers else "attribute")
                slots.append(Slot(path, submodule, attr, value, kind))
            elif isinstance(value, list) and value and all(isinstance(v, torch.Tensor)
                                                           for v in value):
                slots.append(Slot(path, submodule, attr, value, "list"))
    return slots


Replace = Callable[[str, torch.Tensor, str], Optional[torch.Tensor]]


def map_slots(module: torch.jit.ScriptModule, replace: Replace) -> None:
    """Put replace(path, tensor, kind) in place of every tensor of module's slots (None: keep it).

    replace sees each tensor once (told apart by identity), at its first path, tensor slots
    before lists; every slot holding the tensor gets the same replacement: shared tensors stay
    shared."""
    slots = tensor_slots(module)
    replacement = {}
    for slot in sorted(slots, key=lambda s: s.kind == "list"):   # stable: tensor slots first
        tensors = slot.value if slot.kind == "list" else [slot.value]
        for i, tensor in enumerate(tensors):
            if tensor._cdata not in replacement:
                path = f"{slot.path}.{i}" if slot.kind == "list" else slot.path
                replacement[tensor._cdata] = replace(path, tensor, slot.kind)
    for slot in slots:
        tensors = slot.value if slot.kind == "list" else [slot.value]
        new = [replacement[t._cdata] for t in tensors]
        if any(n is not None for n in new):
            new = [t if n is None else n for t, n in zip(tensors, new)]
            slot.owner._c.setattr(slot.attr, new if slot.kind == "list" else new[0])


# -------------------------------------------------------------------------------------------------
# Weightless files: Note [Weightless files] at the top

def is_weight(path: str, tensor: torch.Tensor, kind: str) -> bool:
    return kind == "parameter" or (kind == "buffer" and tensor.is_floating_point()
                                   and path.rsplit(".", 1)[-1] in STATISTIC_BUFFERS)


def describe(path: str, tensor: torch.Tensor, kind: str) -> dict:
    values = tensor.detach().to(torch.float64)
    if not torch.isfinite(values).all():
        raise ValueError(f"{path} is not finite after initialisation")
    if values.numel() == 0 or values.min() == values.max():
        mean, std = (values.flatten()[0].item() if values.numel() else 0.0), 0.0
    else:
        mean, std = values.mean().item(), values.std(unbiased=False).item()
    fan_in = tensor.numel() // tensor.shape[0] if tensor.dim() >= 2 and tensor.shape[0] else 0
    return {"path": path, "shape": list(tensor.shape),
            "dtype": str(tensor.dtype).replace("torch.", ""), "mean": mean, "std": std,
            "fan_in": fan_in, "kind": kind}


def strip_weights(module: torch.jit.ScriptModule) -> Tuple[List[dict], Dict[str, torch.Tensor]]:
    """Replace the weights by expanded 0-d zeros; return their records and the originals by path."""
    records, originals = [], {}

    def strip(path, tensor, kind):
        if not is_weight(path, tensor, kind):
            return None
        records.append(describe(path, tensor, kind))
        originals[path] = tensor
        zero = torch.zeros((), dtype=tensor.dtype).expand(tensor.shape)
        return zero.requires_grad_(tensor.requires_grad)

    with torch.no_grad():
        map_slots(module, strip)
    return records, originals


def refill_value(record: dict, generator: torch.Generator) -> torch.Tensor:
    """A tensor drawn by the refill rule (Note [Weightless files]), as the C++ loader draws it."""
    mean, std, shape = record["mean"], record["std"], record["shape"]
    if std > 0:
        low, high = mean - math.sqrt(3) * std, mean + math.sqrt(3) * std
    elif len(shape) >= 2:
        bound = 1 / math.sqrt(record["fan_in"]) if record["fan_in"] else 0.0
        low, high = -bound, bound
    elif mean == 0:
        low, high = -0.1, 0.1
    else:
        low, high = mean - 0.1 * abs(mean), mean + 0.1 * abs(mean)
    values = torch.rand(shape, generator=generator, dtype=torch.float64) * (high - low) + low
    return values.to(getattr(torch, record["dtype"]))


def assign(module: torch.jit.ScriptModule, values: Dict[str, torch.Tensor]) -> None:
    """Put these tensors in the slots at these paths, and in every slot sharing the tensor there."""
    found = set()

    def put(path, tensor, kind):
        if path in values:
            found.add(path)
            return values[path]
        return None

    with torch.no_grad():
        map_slots(module, put)
    if found != set(values):
        raise RuntimeError(f"no slots at {sorted(set(values) - found)[:3]}")


def load_refilled(path: Path, dtype: torch.dtype, seed: int = 0) -> torch.jit.ScriptModule:
    """The saved file, refilled from its records, its floating tensors converted to dtype."""
    extra = {WEIGHTLESS_JSON: ""}
    module = torch.jit.load(str(path), _extra_files=extra)
    generator = torch.Generator().manual_seed(seed)
    records = json.loads(extra[WEIGHTLESS_JSON])["tensors"]
    assign(module, {r["path"]: refill_value(r, generator) for r in records})
    with torch.no_grad():   # floating tensors only: integer buffers (indices) keep their dtype
        map_slots(module, lambda _, t, __: t.to(dtype) if t.is_floating_point() else None)
    return module


# -------------------------------------------------------------------------------------------------
# Inputs and outputs

def make_inputs(arch: Arch, sizes: dict, dtype: torch.dtype, seed: int) -> List[torch.Tensor]:
    """The inputs the manifest describes. Floating values are drawn in float64, then converted:
    every dtype sees the same values."""
    generator = torch.Generator().manual_seed(seed)
    tensors = []
    for spec in arch.inputs:
        shape = [sizes[d] if isinstance(d, str) else d for d in spec["shape"]]
        if "fill" in spec:
            tensors.append(torch.full(shape, sizes[spec["fill"]], dtype=torch.int64))
        elif "bound" in spec:
            tensors.append(torch.randint(0, spec["bound"], shape, generator=generator))
        else:
            low, high = spec["range"]
            values = torch.rand(shape, generator=generator, dtype=torch.float64)
            tensors.append((values * (high - low) + low).to(dtype))
    return tensors


def flatten(value) -> List[torch.Tensor]:
    """The tensors of a (nested) tuple, list or dict result, in order; dict values in key order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in flatten(v)]
    raise TypeError(f"the result holds a {type(value).__name__}")


def run(arch: Arch, module, inputs: List[torch.Tensor]) -> List[torch.Tensor]:
    with torch.no_grad():
        outputs = flatten(module(*inputs))
    if len(outputs) != len(arch.outputs):
        raise RuntimeError(f"{len(outputs)} outputs, the table lists {len(arch.outputs)}")
    return outputs


def relative_difference(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """max |actual - expected| / max |expected|; inf on a shape mismatch or NaN."""
    if actual.shape != expected.shape:
        return math.inf
    if expected.numel() == 0:
        return 0.0
    difference = (actual.double() - expected.double()).abs().max().item()
    scale = expected.double().abs().max().item()
    if math.isnan(difference) or math.isnan(scale):
        return math.inf
    return difference / scale if scale > 0 else (0.0 if difference == 0 else math.inf)


def degeneracy(tensor: torch.Tensor) -> Optional[str]:
    """Why a golden output is useless to compare against, or None."""
    if not tensor.is_floating_point() or tensor.numel() == 0:
        return None
    values = tensor.double()
    if not torch.isfinite(values).all():
        return "non-finite values"
    peak = values.abs().max().item()
    if peak == 0:
        return "all zero"
    if peak < DEGENERATE_MAX_ABS:
        return f"max |value| {peak:.1e} < {DEGENERATE_MAX_ABS:g}"
    if tensor.numel() > 1 and values.min() == values.max():
        return "constant"
    return None


def graph_facts(module: torch.jit.ScriptModule) -> Tuple[set, set]:
    """The op kinds of forward's graph (calls inlined, every branch) and its device constants."""
    kinds, devices = set(), set()

    def walk(block):
        for node in block.nodes():
            kinds.add(node.kind())
            if node.kind() == "prim::Constant" and node.output().type().kind() == "DeviceObjType":
                devices.add(str(node.output().toIValue()))
            for inner in node.blocks():
                walk(inner)

    walk(module.inlined_graph)
    return kinds, devices


# -------------------------------------------------------------------------------------------------
# Export and check one architecture

class CheckFailed(Exception):
    pass


@dataclasses.dataclass
class Checked:
    configs: List[str]          # the configs that ran, in table order
    forward_s: float            # the saved file's f32 forward at the first of them
    dtypes: List[str]
    golden: str
    libraries: List[str]
    degenerate: Optional[str]
    notes: List[str]


def check_fidelity(arch: Arch, model: nn.Module, path: Path, originals: Dict[str, torch.Tensor],
                   notes: List[str]) -> Tuple[List[str], float]:
    """The configs where the saved file, its real weights put back, reproduces the eager model in
    f32 (a trace that specialised on its example fails here), and the first one's forward time."""
    saved = torch.jit.load(str(path))
    assign(saved, originals)
    configs, dropped, forward_s = [], [], math.nan
    for config, sizes in arch.configs.items():
        inputs = make_inputs(arch, sizes, torch.float32, seed=1)
        try:
            expected, begin = run(arch, model, inputs), time.time()
            actual = run(arch, saved, inputs)
            forward_s = forward_s if configs else time.time() - begin
            worst = max((relative_difference(a, e) for a, e in zip(actual, expected)), default=0)
            if worst > FIDELITY_TOLERANCE:
                raise CheckFailed(f"differs from the eager model by {worst:.1e} of max|eager|")
            configs.append(config)
        except Exception as error:
            dropped.append(f"{config}: {one_line(error)}")
    if not configs:
        raise CheckFailed("no config ran: " + "; ".join(dropped))
    if dropped:
        notes.append("dropped " + "; ".join(dropped))
    return configs, forward_s


def run_in(arch: Arch, module, config: str, dtype: str, seed: int = 1) -> List[torch.Tensor]:
    """module's outputs on config's inputs in dtype; fails when a floating output is of another
    dtype (a tensor made in forward with a baked dtype)."""
    outputs = run(arch, module, make_inputs(arch, arch.configs[config], DTYPES[dtype], seed))
    baked = [o.dtype for o in outputs if o.is_floating_point() and o.dtype != DTYPES[dtype]]
    if baked:
        raise CheckFailed(f"returns {baked[0]} (a tensor of baked dtype)")
    return outputs


def check(arch: Arch, model: nn.Module, path: Path, originals: Dict[str, torch.Tensor]) -> Checked:
    """Check the saved file: every config against the eager model, then the refilled model (the
    goldens) in f64, f32 and bf16. Drops configs that fail; fails when none is left."""
    notes = []
    kinds, devices = graph_facts(torch.jit.load(str(path)))
    fused = sorted(k for k in kinds if k in FUSED_INFERENCE_OPS)
    if fused and arch.export == "trace":
        raise CheckFailed(f"the traced graph holds fused inference ops {fused}")
    if fused:
        notes.append(f"fast-path branch with {','.join(fused)} (taken under no_grad on CPU)")
    if devices:
        notes.append(f"device constants {','.join(sorted(devices))}")
    libraries = sorted({k.split("::")[0] for k in kinds} & set(CUSTOM_OP_LIBRARIES))
    configs, forward_s = check_fidelity(arch, model, path, originals, notes)

    # The golden is f64 when every config runs in f64 and returns f64.
    compared = [i for i, (_, compare) in enumerate(arch.outputs) if compare != "skip"]
    f32 = load_refilled(path, torch.float32)
    goldens = {"f32": {configs[0]: run_in(arch, f32, configs[0], "f32")}}
    try:
        f64 = load_refilled(path, torch.float64)
        goldens["f64"] = {config: run_in(arch, f64, config, "f64") for config in configs}
        golden, golden_module = "f64", f64
        drift = max((relative_difference(goldens["f32"][configs[0]][i],
                                          goldens["f64"][configs[0]][i]) for i in compared),
                    default=0)
        if drift > 1e-3:
            notes.append(f"f32 differs from f64 by {drift:.1e} of max|golden|")
    except Exception as error:
        notes.append(f"f64: {one_line(error)}")
        golden, golden_module = "f32", f32
        goldens["f32"].update({config: run_in(arch, f32, config, "f32") for config in configs})

    degenerate = next((f"{arch.outputs[i][0]}: {why} (config {config})"
                       for config in configs for i in compared
                       for why in [degeneracy(goldens[golden][config][i])] if why), None)
    peak = max((goldens[golden][configs[0]][i].double().abs().max().item() for i in compared
                if goldens[golden][configs[0]][i].numel()), default=0)
    if peak > EXPLODING_ABOVE:
        notes.append(f"outputs reach {peak:.1e}")
    if compared and not degenerate:
        other = run_in(arch, golden_module, configs[0], golden, seed=2)
        spread = max(relative_difference(other[i], goldens[golden][configs[0]][i])
                     for i in compared)
        if spread < INSENSITIVE_BELOW:
            notes.append(f"insensitive to its input: two inputs' outputs differ by {spread:.1e}")
    skipped = [f"{name} {list(t.shape)}"
               for (name, compare), t in zip(arch.outputs, goldens[golden][configs[0]])
               if compare == "skip"]
    if skipped:
        notes.append("skipped outputs " + ", ".join(skipped[:3]))

    dtypes = ["f32", "f64"] if golden == "f64" else ["f32"]
    try:
        run_in(arch, load_refilled(path, torch.bfloat16), configs[0], "bf16")
        dtypes.append("bf16")
    except Exception as error:
        notes.append(f"bf16: {one_line(error)}")
    return Checked(configs, forward_s, dtypes, golden, libraries, degenerate, notes)


def rescale_to_unit_activations(model: nn.Module, inputs: List[torch.Tensor]) -> None:
    """Scale each conv and linear layer so that its output has unit std on these inputs, in
    forward order (LSUV initialisation, Mishkin & Matas 2016).

    Randomly initialised deep depthwise nets in eval mode (batch norm, its running statistics 0
    and 1, passes its input through) shrink the signal layer after layer: mobilenet_v2's logits
    for two inputs differ by 1e-9 of their size, they are the head's bias. Such a golden checks
    nothing upstream of the head. The refill keeps each tensor's std, so the scale carries over."""
    done = set()

    def rescale(layer, args, output):
        std = output.std().item()
        if layer in done or not std > 0:    # a layer called twice is rescaled once
            return None
        done.add(layer)
        layer.weight.div_(std)
        if layer.bias is not None:
            layer.bias.div_(std)
        return output / std

    layer_types = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)
    handles = [m.register_forward_hook(rescale) for m in model.modules()
               if isinstance(m, layer_types)]
    with torch.no_grad():
        model(*inputs)
    for handle in handles:
        handle.remove()


def export(arch: Arch, out: Path) -> str:
    """Export, strip, save and check one architecture; returns the report's reason text."""
    torch.manual_seed(0)
    model = arch.build().eval()
    first = next(iter(arch.configs.values()))
    if arch.rescale:
        rescale_to_unit_activations(model, make_inputs(arch, first, torch.float32, seed=3))
    with torch.enable_grad():   # under no_grad a trace bakes fused inference kernels
        if arch.export == "script":
            exported = torch.jit.script(model)
        else:   # strict=False lets a trace return lists and dicts
            example = tuple(make_inputs(arch, first, torch.float32, seed=1))
            exported = torch.jit.trace(model, example, check_trace=False, strict=False)
    records, originals = strip_weights(exported)
    partial = out / f"{arch.name}.pt.partial"
    weightless = json.dumps({"format": 1, "tensors": records})
    torch.jit.save(exported, str(partial), _extra_files={WEIGHTLESS_JSON: weightless})
    del exported
    checked = check(arch, model, partial, originals)
    size_mb = partial.stat().st_size / 1e6
    partial.replace(out / f"{arch.name}.pt")
    write_manifest(arch, checked, out / f"{arch.name}.yaml")

    facts = [f"{size_mb:.2f} MB", f"forward {checked.forward_s:.2f} s",
             f"dtypes {','.join(checked.dtypes)}", f"golden {checked.golden}"]
    if checked.degenerate:
        facts.insert(0, f"DEGENERATE {checked.degenerate}")
    if checked.libraries:
        facts.append(f"needs {','.join(checked.libraries)}")
    if size_mb > SIZE_LIMIT_MB:
        facts.append(f"over {SIZE_LIMIT_MB:g} MB: {kept_tensors(out / f'{arch.name}.pt')}")
    return "; ".join(facts + checked.notes)


def kept_tensors(path: Path) -> str:
    """What a file that is not small keeps: its unstripped tensors' bytes, and the largest."""
    sizes = {}
    for slot in tensor_slots(torch.jit.load(str(path))):
        for tensor in slot.value if slot.kind == "list" else [slot.value]:
            if tensor.stride() and 0 not in tensor.stride():  # stripped ones have zero strides
                sizes[tensor._cdata] = (tensor.numel() * tensor.element_size(), slot.path)
    total = sum(size for size, _ in sizes.values())
    largest, where = max(sizes.values(), default=(0, "-"))
    return f"unstripped tensors {total / 1e6:.2f} MB, largest {where} {largest / 1e6:.2f} MB"


def one_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()] or [""]
    if lines[0].startswith("The following operation failed in the TorchScript interpreter"):
        return lines[-1][:300]      # the error the interpreter caught, "RuntimeError: ..."
    return f"{type(error).__name__}: {lines[0]}"[:300]


# -------------------------------------------------------------------------------------------------
# The manifest

def yaml_scalar(value) -> str:
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    plain = (re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+\- ]*[A-Za-z0-9_.]|[A-Za-z0-9_]", text)
             and yaml.safe_load(text) == text)
    return text if plain else json.dumps(text)   # a JSON string is a YAML double-quoted scalar


def yaml_flow(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {yaml_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_flow(v) for v in value) + "]"
    return yaml_scalar(value)


def write_manifest(arch: Arch, checked: Checked, path: Path) -> None:
    how = "scripted" if arch.export == "script" else "traced with autograd on"
    notes = [arch.note] if arch.note else []
    if arch.rescale:
        notes.append("conv and linear weights rescaled for unit activations (LSUV)")
    source = f"{arch.source} {VERSIONS[arch.source]}"
    fields = {
        "name": arch.name,
        "file": f"{arch.name}.pt",
        "description": "; ".join([f"{arch.call}, {how}"] + notes),
        "source": source,
        "export": arch.export,
        "task": arch.task,
        "tags": list(arch.tags),
        "inputs": list(arch.inputs),
        "configs": {name: arch.configs[name] for name in checked.configs},
        "dtypes": checked.dtypes,
        "golden": checked.golden,
        "libraries": checked.libraries or None,     # None: the key is left out
        "outputs": [{"name": name, "compare": compare} for name, compare in arch.outputs],
        "degenerate": checked.degenerate,
    }
    fields = {key: value for key, value in fields.items() if value is not None}
    lines = [f"# {arch.name}: {arch.task} model from {source}, random init, weights stripped "
             f"(refilled from {WEIGHTLESS_JSON}); written by models/real/export.py"]
    for key, value in fields.items():
        if key in ("inputs", "outputs"):
            lines += [f"{key}:"] + [f"  - {yaml_flow(item)}" for item in value]
        elif key == "configs":
            lines.append(f"{key}:")
            lines += [f"  {name}: {yaml_flow(sizes)}" for name, sizes in value.items()]
        else:
            lines.append(f"{key}: {yaml_flow(value)}")
    text = "\n".join(lines) + "\n"
    if yaml.safe_load(text) != json.loads(json.dumps(fields)):
        raise RuntimeError("the manifest does not read back as written")
    path.write_text(text)


# -------------------------------------------------------------------------------------------------
# Main: caching, progress, report

def stamp() -> str:
    """What the exports depend on: this file's bytes and the library versions."""
    content = Path(__file__).read_bytes() + json.dumps(VERSIONS, sort_keys=True).encode()
    return hashlib.sha256(content).hexdigest()


def refresh_stamp(out: Path) -> None:
    """Remove every export made by another version of this file or of the libraries, then stamp
    the directory: it never mixes versions, even after a run stopped half-way."""
    path = out / ".stamp"
    if path.exists() and path.read_text().strip() == stamp():
        return
    for arch in ARCHITECTURES:
        for suffix in (".pt", ".yaml"):
            (out / f"{arch.name}{suffix}").unlink(missing_ok=True)
    (out / "export-report.txt").unlink(missing_ok=True)
    path.write_text(stamp() + "\n")


def read_report(out: Path) -> Dict[str, str]:
    """name -> line of the directory's report."""
    path = out / "export-report.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return {line.split()[0]: line for line in lines if line.strip()}


def report_line(name: str, status: str, seconds: float, reason: str) -> str:
    return f"{name:<38} {status:<6} {seconds:6.1f}  {reason}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="directory for the .pt, .yaml and report files")
    parser.add_argument("--set", choices=sorted(SETS), default="all",
                        help="which architectures (default: all)")
    parser.add_argument("--only", help="comma-separated names within the set")
    parser.add_argument("--list", action="store_true", help="list the architectures and exit")
    args = parser.parse_args(argv)
    validate_table()

    chosen = SETS[args.set]
    if args.only:
        names = args.only.split(",")
        unknown = [n for n in names if n not in {a.name for a in chosen}]
        if unknown:
            parser.error(f"not in the {args.set} set: {', '.join(unknown)}")
        chosen = [a for a in chosen if a.name in names]
    if args.list:
        for a in chosen:
            smoke = "  (smoke)" if a.smoke else ""
            print(f"{a.name:<38} {a.export:<7} {a.task:<21} {a.source}{smoke}")
        return 0
    if not args.out:
        parser.error("--out is required")

    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    refresh_stamp(args.out)
    # The report covers every model of the directory: lines of models not chosen now are kept.
    report = read_report(args.out)
    exported, started = 0, time.time()
    for index, arch in enumerate(chosen, 1):
        begin = time.time()
        if (args.out / f"{arch.name}.pt").exists() and (args.out / f"{arch.name}.yaml").exists():
            status, seconds = "ok", 0.0
            earlier = report.get(arch.name, "").split(None, 3)[3:]
            reason = "; ".join(["cached"] + [r.removeprefix("cached; ") for r in earlier])
        else:
            try:
                status, reason = "ok", export(arch, args.out)
            except Exception as error:
                status, reason = "FAILED", one_line(error)
                print("".join(traceback.format_exc().splitlines(True)[-12:]), file=sys.stderr)
            finally:
                (args.out / f"{arch.name}.pt.partial").unlink(missing_ok=True)
                gc.collect()
            seconds = time.time() - begin
        exported += status == "ok"
        report[arch.name] = report_line(arch.name, status, seconds, reason)
        print(f"[{index:2}/{len(chosen)}] {report[arch.name]}", flush=True)
        lines = [report[a.name] for a in ARCHITECTURES if a.name in report]
        (args.out / "export-report.txt").write_text("\n".join(lines) + "\n")
    print(f"{exported} of {len(chosen)} exported in {time.time() - started:.0f} s; "
          f"report: {args.out / 'export-report.txt'}")
    return 0 if exported else 1


if __name__ == "__main__":
    # Scripted code lists a module's constants in set order, which follows Python's string-hash
    # seed: with a random seed the same model exports to different bytes in every process, and
    # the harness keys a model by its content. Pin the seed (a fresh interpreter takes it).
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, PYTHONHASHSEED="0"))
    sys.exit(main())
