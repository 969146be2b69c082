"""Every embedder passes one contract; each provider's own behaviour is tested beside it."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from signet.errors import InvalidInput
from signet.providers.embedder import PROVIDERS, Embedder, make_embedder
from signet.providers.hash_embedder import HashEmbedder


class EmbedderContract:
    """What every Embedder must do; subclasses provide the `embedder` fixture."""

    def test_same_text_gives_the_same_vector(self, embedder: Embedder) -> None:
        first = embedder.embed(["the cat sat on the mat"])
        second = embedder.embed(["the cat sat on the mat"])
        np.testing.assert_allclose(first, second, atol=1e-6)

    def test_a_batch_equals_the_texts_embedded_one_by_one(self, embedder: Embedder) -> None:
        texts = ["short", "a somewhat longer sentence about memory", "", "short", "ünïcödé ✓"]
        batch = embedder.embed(texts)
        singles = np.vstack([embedder.embed([t]) for t in texts])
        np.testing.assert_allclose(batch, singles, atol=1e-4)

    def test_rows_are_unit_float32_of_the_declared_width(self, embedder: Embedder) -> None:
        vectors = embedder.embed(["one", "two words", "three words here"])
        assert vectors.dtype == np.float32
        assert vectors.shape == (3, embedder.dimensions)
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_no_texts_give_an_empty_matrix(self, embedder: Embedder) -> None:
        assert embedder.embed([]).shape == (0, embedder.dimensions)

    def test_it_implements_the_protocol(self, embedder: Embedder) -> None:
        assert isinstance(embedder, Embedder)
        assert embedder.name and isinstance(embedder.model, str)


class TestHashEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> Embedder:
        return HashEmbedder(dimensions=64)

    def test_texts_sharing_words_are_closer(self, embedder: Embedder) -> None:
        a, b, c = embedder.embed(
            ["deploy the staging server", "the staging server deploy failed", "bake bread"]
        )
        assert a @ b > a @ c + 0.3

    def test_vectors_do_not_depend_on_the_process(self) -> None:
        # blake2b, not the salted hash(): another process with another hash seed agrees.
        code = (
            "from signet.providers.hash_embedder import HashEmbedder;"
            "print(HashEmbedder(8).embed(['stable text']).tolist())"
        )
        outputs = {
            subprocess.run(
                [sys.executable, "-c", code],
                env={**os.environ, "PYTHONHASHSEED": seed},
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for seed in ("1", "2")
        }
        assert len(outputs) == 1
        here = HashEmbedder(8).embed(["stable text"]).tolist()
        assert outputs == {f"{here}\n"}


class TestMakeEmbedder:
    def test_none_means_no_embedder(self) -> None:
        assert make_embedder("none") is None

    def test_hash_is_selected_through_the_registry(self) -> None:
        embedder = make_embedder("hash", dimensions=32)
        assert isinstance(embedder, HashEmbedder) and embedder.dimensions == 32

    def test_an_unknown_provider_is_invalid_input_naming_the_known_ones(self) -> None:
        with pytest.raises(InvalidInput, match="local"):
            make_embedder("word2vec")

    def test_a_registered_plugin_is_selectable_like_a_built_in(self) -> None:
        PROVIDERS["plugin-test"] = lambda s: HashEmbedder(dimensions=s.dimensions)
        try:
            embedder = make_embedder("plugin-test", dimensions=12)
            assert embedder is not None and embedder.dimensions == 12
        finally:
            del PROVIDERS["plugin-test"]
