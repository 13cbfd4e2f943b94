"""Export the bundled model to ONNX (fp32, or int8 linear layers), and check an export before use.

The export is made from the weights on disk into settings.EMBEDDING_EXPORT_DIR, never
downloaded, on first use (or by `manage.py export_encoder`, which `make run` and `make test`
call). An export is used only after it passed the check: the same tokenizer (every sample
text gives the same word-piece ids), the same dimension, and a cosine of at least
MIN_COSINE with PyTorch's vector for every text of a fixed sample of real chunks (pages of
the PostgreSQL manual and the demo corpus, check_sample.json). The check's result is kept
next to the files with their digests; files that changed since are checked again, and a
failing export is refused with the reason, never used and never silently replaced.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from filelock import FileLock

MIN_COSINE = 0.99
SAMPLE = Path(__file__).with_name("check_sample.json")
# Bumped when the recipe below changes, so an old export is not mistaken for a new one.
RECIPE = "torch.onnx-opset17-eager-attention+ort-bert-fusion-attention+dynamic-int8-per-channel-ffn-out-float-v3"
_COPIED = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
           "sentence_bert_config.json", "config.json")
_MANIFEST = "check.json"


class ExportRefused(ImproperlyConfigured):
    """An ONNX export that is not the bundled model (wrong tokenizer, dimension or vectors)."""


@dataclass(frozen=True)
class ExportCheck:
    backend: str
    samples: int
    dimension: int
    min_cosine: float
    mean_cosine: float
    model_sha256: str
    tokenizer_sha256: str


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def export_directory(*, backend: str, model_path: Path) -> Path:
    """Where this backend's export of these weights lives: new weights or recipe, new folder."""
    source = hashlib.sha256(RECIPE.encode())
    for name in ("model.safetensors", "tokenizer.json"):
        source.update(_sha256(model_path / name).encode())
    return Path(settings.EMBEDDING_EXPORT_DIR) / f"{settings.EMBEDDING_MODEL_NAME}-{backend}-{source.hexdigest()[:12]}"


def ensure_export(*, backend: str, model_path: Path) -> Path:
    """The checked export's folder, exporting it first if it is not there."""
    directory = export_directory(backend=backend, model_path=model_path)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(directory) + ".lock"):
        if not (directory / "model.onnx").exists():
            export(backend=backend, model_path=model_path, directory=directory)
        if not _manifest_holds(directory):
            result = check_export(backend=backend, directory=directory, model_path=model_path)
            (directory / _MANIFEST).write_text(json.dumps(asdict(result), indent=2) + "\n")
    return directory


def _manifest_holds(directory: Path) -> bool:
    try:
        kept = json.loads((directory / _MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return bool(kept.get("model_sha256") == _sha256(directory / "model.onnx")
                and kept.get("tokenizer_sha256") == _sha256(directory / "tokenizer.json"))


def export(*, backend: str, model_path: Path, directory: Path) -> None:
    """Write the export into a scratch folder and rename it into place: a killed export leaves
    no half-written model behind."""
    scratch = Path(tempfile.mkdtemp(prefix=".export-", dir=directory.parent))
    scratch.chmod(0o755)  # mkdtemp's 0700 would hide the export from other users of the checkout
    try:
        for name in _COPIED:
            if (model_path / name).exists():
                shutil.copy2(model_path / name, scratch / name)
        raw = scratch / "raw.onnx"
        _export_torch(model_path, raw)
        fused = scratch / "fused.onnx"
        _fuse(raw, fused)
        if backend == "onnx-int8":
            _quantize(fused, scratch / "model.onnx")
        else:
            fused.rename(scratch / "model.onnx")
        for leftover in (raw, fused):
            leftover.unlink(missing_ok=True)
        os.replace(scratch, directory)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _export_torch(model_path: Path, target: Path) -> None:
    import torch

    from corpus.encoders.torch_backend import TorchBackend

    reference = TorchBackend(model_path)
    transformer = reference.model[0].auto_model.eval()
    # The plain attention graph: onnxruntime's optimizer fuses it into one Attention op per
    # layer, which it does not recognise in the SDPA graph (1.3x on its own, measured).
    transformer.set_attn_implementation("eager")

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids).last_hidden_state

    sample = reference.hf_tokenizer(["an export sample", "a second, longer export sample"], padding=True,
                                    return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.no_grad():
        torch.onnx.export(LastHiddenState().eval(), tuple(sample[n] for n in names), str(target),
                          input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
                          opset_version=17, dynamo=False)


def _fuse(source: Path, target: Path) -> None:
    """ONNX Runtime's BERT fusions (attention, layer norm, GELU) saved into the file."""
    from onnxruntime.transformers.optimizer import optimize_model

    config = json.loads((source.parent / "config.json").read_text())
    optimized = optimize_model(str(source), model_type="bert", num_heads=int(config["num_attention_heads"]),
                               hidden_size=int(config["hidden_size"]))
    optimized.save_model_to_file(str(target))


def _quantize(source: Path, target: Path) -> None:
    """Dynamic int8 quantisation, weights one scale per output channel: the fused attention
    (its QKV projection) and the linear layers, except each layer's feed-forward output, whose
    input comes out of GELU with the outliers a per-tensor activation scale flattens. Worst
    cosine with PyTorch on manual chunks (docs/decisions/0047): every MatMul per tensor 0.879;
    per channel 0.986-0.988; per channel with the feed-forward outputs float 0.992-0.993."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(source)).graph
    weights = {i.name for i in graph.initializer}
    kept_float = [n.name for n in graph.node if n.op_type == "MatMul" and (
        not weights.intersection(n.input) or ("/output/dense/" in n.name and "/attention/" not in n.name))]
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the quantizer logs a line per tensor it leaves alone
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True,
                         nodes_to_exclude=kept_float,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        quiet.setLevel(level)


def check_export(*, backend: str, directory: Path, model_path: Path) -> ExportCheck:
    """Refuse (ExportRefused, saying why) an export that is not the bundled model."""
    from transformers import AutoTokenizer

    from corpus.encoders.onnx_backend import OnnxBackend
    from corpus.encoders.torch_backend import TorchBackend

    texts: list[str] = json.loads(SAMPLE.read_text())
    reference = TorchBackend(model_path)
    try:
        candidate_tokenizer = AutoTokenizer.from_pretrained(str(directory))
    except Exception as exc:  # noqa: BLE001 - any failure to read it is a refusal
        raise ExportRefused(f"the export in {directory} has no readable tokenizer: {exc}") from exc
    limit = reference.max_seq_length
    differing = sum(
        candidate_tokenizer(text, truncation=True, max_length=limit)["input_ids"]
        != reference.hf_tokenizer(text, truncation=True, max_length=limit)["input_ids"]
        for text in texts
    )
    if differing:
        raise ExportRefused(f"the export in {directory} does not tokenise like the model: {differing} of "
                            f"{len(texts)} sample texts give other word-piece ids; delete the folder to re-export")
    try:
        vectors = OnnxBackend(directory, name=backend).embed(texts, batch_size=16)
    except Exception as exc:  # noqa: BLE001 - a model ONNX Runtime cannot run is a refusal
        raise ExportRefused(f"the export in {directory} does not run: {exc}") from exc
    expected = reference.embed(texts, batch_size=16)
    if vectors.shape != expected.shape:
        raise ExportRefused(f"the export in {directory} gives {vectors.shape[1]}-d vectors; the model gives "
                            f"{expected.shape[1]}-d; delete the folder to re-export")
    cosines = (vectors * expected).sum(axis=1)
    worst = float(cosines.min())
    if not worst >= MIN_COSINE:
        raise ExportRefused(f"the export in {directory} disagrees with the model: cosine {worst:.4f} on its "
                            f"worst sample text (at least {MIN_COSINE} required); delete the folder to re-export")
    return ExportCheck(backend=backend, samples=len(texts), dimension=int(vectors.shape[1]),
                       min_cosine=round(worst, 6), mean_cosine=round(float(np.mean(cosines)), 6),
                       model_sha256=_sha256(directory / "model.onnx"),
                       tokenizer_sha256=_sha256(directory / "tokenizer.json"))
