"""Rewrite the bundled model's graph so its matrix products run in int8.

The model stores int8 weights dequantised in the graph, which onnxruntime folds into fp32 at load.
`int8_products` rewrites each `Cast -> Mul -> MatMul` chain into one
`com.microsoft.DynamicQuantizeMatMul`, each activation row mapped onto [0, 1] so a vector does not
depend on its batch. The vectors move slightly (cosine 0.998-0.999), so the model id differs and
vectors of the other id are re-embedded, never mixed.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

MS_DOMAIN = "com.microsoft"
_PB2 = "_signet_onnx_ml_pb2"
# TensorProto data types this module reads or writes, and their numpy types.
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_}
_FLOAT, _UINT8, _INT8 = 1, 2, 3


def _pb() -> Any:
    """The ONNX protobuf classes without `import onnx`, whose helpers cost 0.6 s of CPU inside the
    first recall's query-embedding budget; onnx_ml_pb2.py needs only protobuf. If onnx is
    imported already, its module is used."""
    if "onnx" in sys.modules:
        onnx = sys.modules["onnx"]
        if onnx is None:  # Python's mark of an import that must fail
            raise ImportError("No module named 'onnx'")
        return onnx.onnx_ml_pb2
    if _PB2 not in sys.modules:
        spec = importlib.util.find_spec("onnx")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("No module named 'onnx'")
        path = Path(list(spec.submodule_search_locations)[0]) / "onnx_ml_pb2.py"
        loaded = importlib.util.spec_from_file_location(_PB2, path)
        if loaded is None or loaded.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
        sys.modules[_PB2] = module
    return sys.modules[_PB2]


def _node(op: str, inputs: list[str], outputs: list[str], *, name: str = "", domain: str = "",
          **attributes: int | list[int]) -> Any:
    node = _pb().NodeProto(op_type=op, input=inputs, output=outputs, name=name, domain=domain)
    for key, value in attributes.items():
        if isinstance(value, list):
            node.attribute.add(name=key, type=7, ints=value)  # AttributeProto.INTS
        else:
            node.attribute.add(name=key, type=2, i=value)  # AttributeProto.INT
    return node


def _array(tensor: Any) -> np.ndarray:
    dtype = _DTYPES[tensor.data_type]
    if tensor.raw_data:
        flat = np.frombuffer(tensor.raw_data, dtype=np.dtype(dtype).newbyteorder("<"))
    elif tensor.data_type == _FLOAT:
        flat = np.asarray(tensor.float_data, dtype=np.float32)
    elif tensor.data_type == 7:
        flat = np.asarray(tensor.int64_data, dtype=np.int64)
    else:  # int8/uint8/int32/bool are stored widened in int32_data
        flat = np.asarray(tensor.int32_data).astype(dtype)
    return flat.astype(dtype).reshape(tuple(tensor.dims))


def _tensor(array: np.ndarray, name: str) -> Any:
    code = next(k for k, v in _DTYPES.items() if np.dtype(v) == array.dtype)
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return _pb().TensorProto(name=name, dims=list(array.shape), data_type=code, raw_data=data)


def int8_products(model_bytes: bytes, *, unsigned: bool | None = None) -> tuple[bytes, int]:
    """The serialised rewritten graph and how many MatMuls now run in int8.

    `unsigned` stores the weights as uint8 with zero point 128 (the same values, exactly),
    for CPUs whose uint8 x int8 kernel can saturate; None decides by this CPU
    (`u8s8_may_saturate`)."""
    pb = _pb()
    if unsigned is None:
        unsigned = u8s8_may_saturate()
    model = pb.ModelProto.FromString(model_bytes)
    graph = model.graph
    index = _Index(graph)
    replaced = _quantised_matmuls(graph, index, unsigned)
    gathers = _int8_gathers(index)
    nodes: list[Any] = []
    for node in index.nodes:  # the same objects _Index saw, so id() identifies them
        if id(node) in index.dropped:
            continue
        for new in gathers.get(id(node)) or replaced.get(id(node)) or [node]:
            copy = pb.NodeProto()
            copy.CopyFrom(new)  # detached before the graph's own list is cleared
            nodes.append(copy)
    del graph.node[:]
    graph.node.extend(nodes)
    _drop_unused_initialisers(graph)
    if replaced and not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.add(domain=MS_DOMAIN, version=1)
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
        mul = self.producer.get(value)
        if mul is None or mul.op_type != "Mul" or mul.input[1] not in self.initialisers:
            return None
        cast = self.producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast":
            return None
        weight = self.initialisers.get(cast.input[0])
        if weight is None or weight.data_type != _INT8:
            return None
        return cast, mul, mul.input[1]

    def drop_if_only_user(self, node: Any, user_count: int = 1) -> None:
        if len(self.consumers[node.output[0]]) <= user_count:
            self.dropped.add(id(node))


def u8s8_may_saturate(cpuinfo: str | None = None, machine: str | None = None) -> bool:
    """Whether onnxruntime's uint8 x int8 GEMM may saturate on this CPU: on x86 without VNNI
    `vpmaddubsw`'s int16 sums overflow (255 x 127 x 2 > 32,767). Where it may, the weights go in
    as uint8 (exact, somewhat slower); unreadable CPU flags on x86 count as may."""
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

    DynamicQuantizeMatMul quantises its whole input on one scale, so a few large rows would coarsen
    every row and a vector would depend on its batch. Each row is mapped to u = (x - min) / span,
    the batch always spans [0, 1] on one grid, and x W = span * (u W) + min * colsum(W) exactly."""
    replaced: dict[int, list[Any]] = {}
    unit_rows: set[str] = set()  # inputs already mapped (Q, K and V share theirs)
    for node in index.nodes:
        if node.op_type != "MatMul":
            continue
        found = index.dequantised(node.input[1])
        if found is None:
            continue
        cast, mul, scale_name = found
        weight = _array(index.initialisers[cast.input[0]])
        scale = _array(index.initialisers[scale_name]).astype(np.float32)
        if weight.ndim != 2 or scale.size not in (1, weight.shape[1]):
            continue  # only per-tensor or per-column scales map onto the kernel's b_scale
        column_scale = f"{node.name}__b_scale"
        colsum = f"{node.name}__colsum"
        columns = np.broadcast_to(scale.reshape(-1), (weight.shape[1],)).astype(np.float32)
        graph.initializer.extend([
            _tensor(columns, column_scale),
            _tensor((weight.astype(np.float32) * columns).sum(axis=0), colsum),
        ])
        weight_inputs = [cast.input[0], column_scale]
        if unsigned:
            shifted, zero = f"{node.name}__b_u8", f"{node.name}__b_zero"
            graph.initializer.extend([
                _tensor((weight.astype(np.int16) + 128).astype(np.uint8), shifted),
                _tensor(np.full(weight.shape[1], 128, np.uint8), zero),
            ])
            weight_inputs = [shifted, column_scale, zero]
        x, out = node.input[0], node.output[0]
        new: list[Any] = []
        if x not in unit_rows:
            new += _unit_rows(graph, x)
            unit_rows.add(x)
        new += [
            _node(
                "DynamicQuantizeMatMul", [f"{x}__unit", *weight_inputs],
                [f"{out}__unit"], name=f"{node.name}_int8", domain=MS_DOMAIN,
            ),
            _node("Mul", [f"{out}__unit", f"{x}__span"], [f"{out}__scaled"]),
            _node("Mul", [f"{x}__min", colsum], [f"{out}__shift"]),
            _node("Add", [f"{out}__scaled", f"{out}__shift"], [out]),
        ]
        replaced[id(node)] = new
        index.drop_if_only_user(mul)
        index.drop_if_only_user(cast)
    return replaced


def _unit_rows(graph: Any, x: str) -> list[Any]:
    """Nodes giving `x__unit` = (x - min) / span per row, with `x__min` and `x__span`."""
    tiny = "__int8_graph_tiny"
    if not any(i.name == tiny for i in graph.initializer):
        # A constant row (span 0) maps to zeros and comes back as its min, exactly.
        graph.initializer.append(_tensor(np.array(1e-12, np.float32), tiny))
    return [
        _node("ReduceMax", [x], [f"{x}__max"], axes=[-1], keepdims=1),
        _node("ReduceMin", [x], [f"{x}__min"], axes=[-1], keepdims=1),
        _node("Sub", [f"{x}__max", f"{x}__min"], [f"{x}__span0"]),
        _node("Max", [f"{x}__span0", tiny], [f"{x}__span"]),
        _node("Sub", [x, f"{x}__min"], [f"{x}__shifted"]),
        _node("Div", [f"{x}__shifted", f"{x}__span"], [f"{x}__unit"]),
    ]


def _int8_gathers(index: _Index) -> dict[int, list[Any]]:
    """Gather(dequantised int8 table, ids) -> Gather(int8 table) * Gather(row scale), in place.

    Only for row-wise scales (shape [rows, 1]), where gathering the scale with the same ids
    gives exactly the dequantised rows."""
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
            _node("Gather", [cast.input[0], ids], [f"{out}__q"], axis=0),
            _node("Cast", [f"{out}__q"], [f"{out}__f"], to=_FLOAT),
            _node("Gather", [scale_name, ids], [f"{out}__scale"], axis=0),
            _node("Mul", [f"{out}__f", f"{out}__scale"], [out]),
        ]
        index.drop_if_only_user(mul)
        index.drop_if_only_user(cast)
    return replaced


def _axis(node: Any) -> int:
    return next((a.i for a in node.attribute if a.name == "axis"), 0)


def _drop_unused_initialisers(graph: Any) -> None:
    used = {name for node in graph.node for name in node.input}
    used.update(o.name for o in graph.output)
    keep = []
    for tensor in graph.initializer:
        if tensor.name in used:
            copy = _pb().TensorProto()
            copy.CopyFrom(tensor)
            keep.append(copy)
    del graph.initializer[:]
    graph.initializer.extend(keep)
