"""Rewrite the bundled model's graph so its matrix products really run in int8.

The bundled all-MiniLM-L6-v2 file stores each weight matrix as int8 with a per-column scale,
dequantised in the graph (`Cast(int8 W) -> Mul(scale) -> MatMul`). onnxruntime folds that
chain into an fp32 constant at load, so the "int8 model" computes in fp32: fp32 MatMul was
67% of its time (docs/benchmarks.md, "Ingest with the bundled model"), and onnxruntime's own
quantisation tools do not see these weights (they are not initialisers of a MatMul).

`int8_products(model_bytes)` rewrites each such chain, in memory at load, into one
`com.microsoft.DynamicQuantizeMatMul` over the *same* int8 weights and scales: the product runs
as an integer GEMM (AVX-512 VNNI / AVX2 / NEON kernels in onnxruntime). Its input is quantised
to uint8 per run; each activation row is first mapped onto [0, 1] by its own min and span (and
mapped back after the product, exactly), so every token row gets the full 8 bits and a text's
vector does not depend on what else is in its batch (see `_quantised_matmuls`). On x86 CPUs
without VNNI the weights go in as uint8 instead (`u8s8_may_saturate`). Nothing is
downloaded or written: the input file keeps its pinned sha256.

The embedding tables get the same treatment the other way round: instead of a dequantised fp32
copy of the 30,522 x 384 word table (47 MB), the int8 rows are gathered and scaled per lookup
(exact: the same products, fewer bytes resident).

The activations' rounding moves the vectors a little (cosine 0.998-0.999 to the fp32 products), so
the rewritten graph is a different model id (`local_embedder.MODEL`): stored vectors of the
other id are re-embedded by the embed worker, never mixed.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

MS_DOMAIN = "com.microsoft"


def int8_products(model_bytes: bytes, *, unsigned: bool | None = None) -> tuple[bytes, int]:
    """The serialised rewritten graph and how many MatMuls now run in int8.

    `unsigned` stores the weights as uint8 with zero point 128 (the same values, exactly),
    for CPUs whose uint8 x int8 kernel can saturate; None decides by this CPU
    (`u8s8_may_saturate`)."""
    import onnx

    if unsigned is None:
        unsigned = u8s8_may_saturate()
    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    index = _Index(graph)
    replaced = _quantised_matmuls(graph, index, unsigned)
    gathers = _int8_gathers(index)
    nodes: list[Any] = []
    for node in index.nodes:  # the same objects _Index saw, so id() identifies them
        if id(node) in index.dropped:
            continue
        for new in gathers.get(id(node)) or replaced.get(id(node)) or [node]:
            copy = onnx.NodeProto()
            copy.CopyFrom(new)  # detached before the graph's own list is cleared
            nodes.append(copy)
    del graph.node[:]
    graph.node.extend(nodes)
    _drop_unused_initialisers(graph)
    if replaced and not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid(MS_DOMAIN, 1))
    return model.SerializeToString(), len(replaced)


class _Index:
    """Who produces and who consumes each value, and the int8 weights behind a dequantise."""

    def __init__(self, graph: Any) -> None:
        self.nodes = list(graph.node)
        self.initialisers = {i.name: i for i in graph.initializer}
        self.producer = {out: n for n in self.nodes for out in n.output}
        self.consumers: dict[str, list[Any]] = defaultdict(list)
        for node in self.nodes:
            for name in node.input:
                self.consumers[name].append(node)
        self.dropped: set[int] = set()

    def dequantised(self, value: str) -> tuple[Any, Any, str] | None:
        """(Cast node, Mul node, scale name) when `value` is Mul(Cast(int8 initialiser), const)."""
        import onnx

        mul = self.producer.get(value)
        if mul is None or mul.op_type != "Mul" or mul.input[1] not in self.initialisers:
            return None
        cast = self.producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast":
            return None
        weight = self.initialisers.get(cast.input[0])
        if weight is None or weight.data_type != onnx.TensorProto.INT8:
            return None
        return cast, mul, mul.input[1]

    def drop_if_only_user(self, node: Any, user_count: int = 1) -> None:
        if len(self.consumers[node.output[0]]) <= user_count:
            self.dropped.add(id(node))


def u8s8_may_saturate(cpuinfo: str | None = None, machine: str | None = None) -> bool:
    """Whether onnxruntime's uint8 x int8 GEMM may saturate on this CPU.

    On x86 without VNNI it multiplies byte pairs with `vpmaddubsw`, whose int16 sums saturate
    (255 x 127 x 2 > 32,767), so products of large activations and weights come out wrong;
    with AVX-512 VNNI or AVX-VNNI (`vpdpbusd`) and on ARM they do not. Where it may, the
    weights go in as uint8 (onnxruntime's u8u8 kernel widens exactly; 35% slower than u8s8
    on this VNNI machine, the same vectors to 1e-7). On x86 where the flags cannot be read
    (no /proc/cpuinfo), assume it may."""
    import platform

    if (machine or platform.machine()).lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return True
    flags = set(cpuinfo.split())
    return not flags & {"avx512_vnni", "avx_vnni"}


def _quantised_matmuls(graph: Any, index: _Index, unsigned: bool) -> dict[int, list[Any]]:
    """MatMul(x, dequantised int8 W) -> the int8 product of x's rows scaled to [0, 1].

    DynamicQuantizeMatMul quantises its whole input with one uint8 scale. Fed the raw
    activations, a few large ones (the [CLS]/[SEP] rows) coarsened every row's grid and a text's
    vector depended on its batch mates and padding (cosine 0.98-0.99 to the fp32 products, and
    0.976 between a text embedded alone and in a batch). So each row is first mapped onto
    [0, 1] by its own min and span, u = (x - min) / span: every row then uses the full 8 bits,
    the batch always spans [0, 1] (scale 1/255, zero point 0: the same grid whatever the batch
    holds), and the product is recovered exactly as x W = span * (u W) + min * colsum(W).
    """
    from onnx import helper, numpy_helper

    replaced: dict[int, list[Any]] = {}
    unit_rows: set[str] = set()  # inputs already mapped (Q, K and V share theirs)
    for node in index.nodes:
        if node.op_type != "MatMul":
            continue
        found = index.dequantised(node.input[1])
        if found is None:
            continue
        cast, mul, scale_name = found
        weight = numpy_helper.to_array(index.initialisers[cast.input[0]])
        scale = numpy_helper.to_array(index.initialisers[scale_name]).astype(np.float32)
        if weight.ndim != 2 or scale.size not in (1, weight.shape[1]):
            continue  # only per-tensor or per-column scales map onto the kernel's b_scale
        column_scale = f"{node.name}__b_scale"
        colsum = f"{node.name}__colsum"
        columns = np.broadcast_to(scale.reshape(-1), (weight.shape[1],)).astype(np.float32)
        graph.initializer.extend([
            numpy_helper.from_array(columns, column_scale),
            numpy_helper.from_array((weight.astype(np.float32) * columns).sum(axis=0), colsum),
        ])
        weight_inputs = [cast.input[0], column_scale]
        if unsigned:
            shifted, zero = f"{node.name}__b_u8", f"{node.name}__b_zero"
            graph.initializer.extend([
                numpy_helper.from_array((weight.astype(np.int16) + 128).astype(np.uint8), shifted),
                numpy_helper.from_array(np.full(weight.shape[1], 128, np.uint8), zero),
            ])
            weight_inputs = [shifted, column_scale, zero]
        x, out = node.input[0], node.output[0]
        new: list[Any] = []
        if x not in unit_rows:
            new += _unit_rows(graph, x)
            unit_rows.add(x)
        new += [
            helper.make_node(
                "DynamicQuantizeMatMul", [f"{x}__unit", *weight_inputs],
                [f"{out}__unit"], name=f"{node.name}_int8", domain=MS_DOMAIN,
            ),
            helper.make_node("Mul", [f"{out}__unit", f"{x}__span"], [f"{out}__scaled"]),
            helper.make_node("Mul", [f"{x}__min", colsum], [f"{out}__shift"]),
            helper.make_node("Add", [f"{out}__scaled", f"{out}__shift"], [out]),
        ]
        replaced[id(node)] = new
        index.drop_if_only_user(mul)
        index.drop_if_only_user(cast)
    return replaced


def _unit_rows(graph: Any, x: str) -> list[Any]:
    """Nodes giving `x__unit` = (x - min) / span per row, with `x__min` and `x__span`."""
    from onnx import helper, numpy_helper

    tiny = "__int8_graph_tiny"
    if not any(i.name == tiny for i in graph.initializer):
        # A constant row (span 0) maps to zeros and comes back as its min, exactly.
        graph.initializer.append(numpy_helper.from_array(np.array(1e-12, np.float32), tiny))
    return [
        helper.make_node("ReduceMax", [x], [f"{x}__max"], axes=[-1], keepdims=1),
        helper.make_node("ReduceMin", [x], [f"{x}__min"], axes=[-1], keepdims=1),
        helper.make_node("Sub", [f"{x}__max", f"{x}__min"], [f"{x}__span0"]),
        helper.make_node("Max", [f"{x}__span0", tiny], [f"{x}__span"]),
        helper.make_node("Sub", [x, f"{x}__min"], [f"{x}__shifted"]),
        helper.make_node("Div", [f"{x}__shifted", f"{x}__span"], [f"{x}__unit"]),
    ]


def _int8_gathers(index: _Index) -> dict[int, list[Any]]:
    """Gather(dequantised int8 table, ids) -> Gather(int8 table) * Gather(row scale), in place.

    Only for row-wise scales (shape [rows, 1]), where gathering the scale with the same ids
    gives exactly the dequantised rows."""
    from onnx import TensorProto, helper

    replaced: dict[int, list[Any]] = {}
    for node in index.nodes:
        if node.op_type != "Gather" or _axis(node) != 0:
            continue
        found = index.dequantised(node.input[0])
        if found is None:
            continue
        cast, mul, scale_name = found
        scale_dims = list(index.initialisers[scale_name].dims)
        if len(scale_dims) != 2 or scale_dims[1] != 1:
            continue
        ids, out = node.input[1], node.output[0]
        replaced[id(node)] = [
            helper.make_node("Gather", [cast.input[0], ids], [f"{out}__q"], axis=0),
            helper.make_node("Cast", [f"{out}__q"], [f"{out}__f"], to=TensorProto.FLOAT),
            helper.make_node("Gather", [scale_name, ids], [f"{out}__scale"], axis=0),
            helper.make_node("Mul", [f"{out}__f", f"{out}__scale"], [out]),
        ]
        index.drop_if_only_user(mul)
        index.drop_if_only_user(cast)
    return replaced


def _axis(node: Any) -> int:
    return next((a.i for a in node.attribute if a.name == "axis"), 0)


def _drop_unused_initialisers(graph: Any) -> None:
    used = {name for node in graph.node for name in node.input}
    used.update(o.name for o in graph.output)
    import onnx

    keep = []
    for tensor in graph.initializer:
        if tensor.name in used:
            copy = onnx.TensorProto()
            copy.CopyFrom(tensor)
            keep.append(copy)
    del graph.initializer[:]
    graph.initializer.extend(keep)
