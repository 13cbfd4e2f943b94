"""The ONNX encoder backends: the export is checked against PyTorch before use, and a wrong
model (another dimension, a shuffled tokenizer, vectors that disagree) is refused by name."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from pytest_django import Settings
from onnx import TensorProto, helper, numpy_helper

from corpus.encoders.embedding import Encoder, get_encoder, model_path
from corpus.encoders.export import SAMPLE, ExportRefused, check_export, ensure_export
from corpus.encoders.onnx_backend import OnnxBackend

BACKEND = "onnx-int8"


@pytest.fixture(scope="session")
def exported() -> Path:
    """The real export (made by `make test`'s export step, or here on first use)."""
    return ensure_export(backend=BACKEND, model_path=model_path())


@pytest.fixture
def planted(exported: Path, tmp_path: Path) -> Path:
    """A copy of the good export that a test may spoil."""
    target = tmp_path / "export"
    shutil.copytree(exported, target)
    return target


def plant_model(directory: Path, *, width: int, seed: int = 7) -> None:
    """A real ONNX model with the export's inputs whose token states are a random table's rows."""
    vocab = json.loads((directory / "tokenizer.json").read_text())["model"]["vocab"]
    table = np.random.default_rng(seed).standard_normal((len(vocab), width)).astype(np.float32)
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", width])
    graph = helper.make_graph([helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"])],
                              "planted", inputs, [output], initializer=[numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(directory / "model.onnx"))


def test_the_export_passes_its_check_and_agrees_with_torch(exported: Path) -> None:
    kept = json.loads((exported / "check.json").read_text())
    assert kept["dimension"] == 384 and kept["samples"] == len(json.loads(SAMPLE.read_text()))
    assert kept["min_cosine"] >= 0.99
    texts = ["How do I create a partial index?", "VACUUM reclaims storage occupied by dead tuples."]
    fast = OnnxBackend(exported, name=BACKEND)
    cosines = (fast.embed(texts, batch_size=2) * get_encoder().encode(texts)).sum(axis=1)
    assert cosines.min() >= 0.99
    tokens = fast.token_embeddings(texts)
    assert [t.shape for t in tokens] == [(len(fast.hf_tokenizer(t)["input_ids"]), 384) for t in texts]


def test_a_planted_model_of_another_dimension_is_refused(planted: Path) -> None:
    plant_model(planted, width=256)
    with pytest.raises(ExportRefused, match="gives 256-d vectors; the model gives 384-d"):
        check_export(backend=BACKEND, directory=planted, model_path=model_path())


def test_a_shuffled_tokenizer_is_refused(planted: Path) -> None:
    spec = json.loads((planted / "tokenizer.json").read_text())
    vocab = spec["model"]["vocab"]
    words = [w for w in vocab if not w.startswith("[")]
    ids = [vocab[w] for w in words]
    random.Random(3).shuffle(ids)
    vocab.update(zip(words, ids))
    (planted / "tokenizer.json").write_text(json.dumps(spec))
    with pytest.raises(ExportRefused, match="does not tokenise like the model"):
        check_export(backend=BACKEND, directory=planted, model_path=model_path())


def test_vectors_that_disagree_with_torch_are_refused(planted: Path) -> None:
    plant_model(planted, width=384)
    with pytest.raises(ExportRefused, match=r"disagrees with the model: cosine -?\d\.\d+ on its worst sample"):
        check_export(backend=BACKEND, directory=planted, model_path=model_path())


def test_a_file_changed_after_its_check_is_checked_again_and_refused(planted: Path, settings: Settings,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept check names the files' digests: a model swapped in later is not trusted on it."""
    import corpus.encoders.export as export

    monkeypatch.setattr(export, "export_directory", lambda **_: planted)
    assert ensure_export(backend=BACKEND, model_path=model_path()) == planted  # the copy's check holds
    plant_model(planted, width=256)
    with pytest.raises(ExportRefused, match="256-d"):
        ensure_export(backend=BACKEND, model_path=model_path())


def test_the_encoder_identity_names_model_and_backend(exported: Path) -> None:
    fast = Encoder(backend=OnnxBackend(exported, name=BACKEND), name="all-MiniLM-L6-v2", dimension=384)
    assert fast.identity == "all-MiniLM-L6-v2:onnx-int8"
    assert get_encoder().identity.startswith("all-MiniLM-L6-v2:")
    # The counter is the model's tokenizer whatever runs the model: chunk sizes do not move.
    text = json.loads(SAMPLE.read_text())[0]
    assert fast.count_tokens(text) == get_encoder().count_tokens(text)


def test_a_backend_override_reads_and_writes_with_that_backends_encoder(settings: Settings) -> None:
    """A changed EMBEDDING_BACKEND (a benchmark comparing runtimes) gives that backend's encoder,
    loaded once, and the configured one comes back after."""
    configured = get_encoder()
    other = "torch" if configured.backend.name != "torch" else BACKEND
    settings.EMBEDDING_BACKEND = other
    overridden = get_encoder()
    assert overridden.identity == f"all-MiniLM-L6-v2:{other}"
    assert get_encoder() is overridden
    settings.EMBEDDING_BACKEND = configured.backend.name
    assert get_encoder() is configured


def test_a_model_override_reads_and_writes_with_that_models_encoder(settings: Settings, tmp_path: Path) -> None:
    """Another model under the same backend (EMBEDDING_MODEL_PATH) gives that model's encoder,
    not the backend's cached one under another name."""
    settings.EMBEDDING_BACKEND = "torch"
    stock = get_encoder()
    copy = tmp_path / "adapted"
    shutil.copytree(model_path(), copy, symlinks=True)
    settings.EMBEDDING_MODEL_NAME = "all-MiniLM-L6-v2-adapted-test"
    settings.EMBEDDING_MODEL_PATH = str(copy)
    adapted = get_encoder()
    assert adapted is not stock
    assert adapted.identity == "all-MiniLM-L6-v2-adapted-test:torch"
    assert get_encoder() is adapted


def test_the_reranker_reads_token_states_in_small_ordered_batches(exported: Path) -> None:
    """Batches of 4 ordered by word pieces give the late-interaction scores one padded batch
    gives (int8 scales activations per batch: close, not bit for bit), text by text."""
    backend = OnnxBackend(exported, name=BACKEND)
    texts = json.loads(SAMPLE.read_text())[:9] + ["how much memory can a sort use?"]
    small = backend.token_embeddings(texts, batch_size=4)
    whole = backend.token_embeddings(texts, batch_size=len(texts))
    assert [s.shape for s in small] == [w.shape for w in whole]

    def maxsim(states: list[np.ndarray]) -> np.ndarray:
        unit = [s / np.linalg.norm(s, axis=1, keepdims=True) for s in states]
        question = unit[-1][1:-1]
        return np.array([(question @ doc.T).max(axis=1).mean() for doc in unit[:-1]])

    # The shapes catch states handed to another text (seen red with each batch's rows rotated);
    # per-batch activation scales move a MaxSim by up to ~0.015 on these texts, hence the bound.
    assert np.abs(maxsim(small) - maxsim(whole)).max() < 0.025


@pytest.mark.parametrize("backend_name", ["torch", BACKEND])
def test_vectors_with_states_are_the_vectors_and_the_states_of_one_pass(backend_name: str, settings: Settings) -> None:
    """What the ingest stores for the reranker (docs/decisions/0063): the same vectors `embed`
    gives, and per text its unpadded token states, whose mean is that text's vector."""
    settings.EMBEDDING_BACKEND = backend_name
    encoder = get_encoder()
    texts = ["How do I create a partial index?", "VACUUM reclaims storage occupied by dead tuples, "
             "which an UPDATE or DELETE leaves behind.", "ok"]
    vectors, states = encoder.encode_with_states(texts, batch_size=2)
    assert np.allclose(vectors, encoder.encode(texts, batch_size=2), atol=1e-5)
    assert [s.shape for s in states] == [(len(encoder.backend.hf_tokenizer(t)["input_ids"]), 384) for t in texts]
    pooled = np.stack([s.mean(axis=0) for s in states])
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    assert (pooled * vectors).sum(axis=1).min() > 0.9999  # seen red with each text given another's rows


def test_a_bulk_encode_runs_batches_side_by_side_and_gives_the_one_session_results(exported: Path) -> None:
    """Ingest encodes in bulk (one batch per core on single-threaded sessions, 0126); a stored
    row must not depend on it: each batch's vectors and token states are those of the same
    batch run on the latency session."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: bulk encoding runs batch after batch")
    backend = OnnxBackend(exported, name=BACKEND)
    rng = random.Random(5)
    words = "vacuum index tuple planner replication backup role schema trigger".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 60))) for _ in range(40)]
    vectors, states = backend.embed_with_states(texts, batch_size=4, bulk=True)
    assert backend._bulk is not None, "the bulk session never ran"
    encoded = backend.hf_tokenizer(texts, truncation=True, max_length=backend.max_seq_length)
    for index, batch in backend._batches(encoded, 4):
        hidden, mask = backend._run(batch)
        for row, i in enumerate(index):
            np.testing.assert_array_equal(states[i], hidden[row, : int(mask[row].sum())])
    np.testing.assert_array_equal(vectors, backend.embed(texts, batch_size=4))


def test_the_question_session_does_not_spin_and_gives_the_same_vectors(exported: Path) -> None:
    """docs/decisions/0128: the session a server encodes questions and sentences with lets its
    idle threads sleep (spinning took the cores other requests needed: 9.1 against 12.0
    answers/s at 4 clients on the manual), and sleeping threads compute the same vectors."""
    backend = OnnxBackend(exported, name=BACKEND)
    options = backend.session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    import onnxruntime as ort

    spinning = ort.SessionOptions()
    spinning.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    backend.session = ort.InferenceSession(str(exported / "model.onnx"), spinning, providers=["CPUExecutionProvider"])
    texts = ["How do I raise max_connections?", "Refunds are issued within 14 days of a purchase."]
    np.testing.assert_array_equal(OnnxBackend(exported, name=BACKEND).embed(texts, batch_size=1),
                                  backend.embed(texts, batch_size=1))
