"""Op database rows: indexing (advanced indexing, gather/scatter, index_*, masked ops, take,
nonzero)."""

from __future__ import annotations

from . import ALL, OpInfo, SampleInput


def empty(torch, shape, dtype):
    """A zero-size tensor of ``shape`` (the Maker builds through ``tolist()``, which keeps only
    the leading dims of an empty array)."""
    return torch.zeros(shape, dtype=getattr(torch, dtype))

NUMERIC = tuple(d for d in ALL if d != "bool")


def _long(torch, values):
    return torch.tensor(values, dtype=torch.int64)


def _mask(torch, values):
    return torch.tensor(values, dtype=torch.bool)


def getitem_samples(torch, dtype, make):
    x = make((3, 4, 5), dtype)
    yield SampleInput(x, ([2, 0],), name="list")
    yield SampleInput(x, ((slice(None), _long(torch, [[0, 3], [1, 1]])),), name="2-d index dim 1")
    yield SampleInput(x, ((_long(torch, [0, 2]), slice(None), _long(torch, [1, 4])),),
                      name="separated: index dims first")
    yield SampleInput(x, ((slice(None), _long(torch, [0, 2]), _long(torch, [1, -1])),),
                      name="adjacent: in place")
    yield SampleInput(x, ((1, slice(1, 3), [0, 4]),), name="int slice list")
    yield SampleInput(x, ((None, Ellipsis, _long(torch, [-1])),), name="None ellipsis")
    yield SampleInput(x, (_mask(torch, [True, False, True]),), name="mask dim 0")
    yield SampleInput(x, ((Ellipsis, _mask(torch, [[True, False, True, False, True]] * 4)),),
                      name="2-d mask")
    yield SampleInput(x, ((_long(torch, [[0], [2]]), _long(torch, [1, 3])),), name="broadcast")
    yield SampleInput(make((4, 6), dtype, noncontiguous=True), ((slice(None), [0, 2]),),
                      name="noncontiguous")
    yield SampleInput(x, (True,), name="True")
    yield SampleInput(x, ((_long(torch, []),),), name="empty index")
    yield SampleInput(empty(torch, (0, 3), dtype), ((slice(None), [1]),), name="empty tensor")
    yield SampleInput(make((5,), dtype), (_long(torch, 3),), name="0-d index")


def index_put_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), ((_long(torch, [0, 2]),), make((2, 3), dtype)),
                      name="rows")
    yield SampleInput(make((4, 3), dtype), ((_long(torch, [0, 3]), _long(torch, [2, 0])),
                                            make((), dtype)), name="points, 0-d value")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True),
                      ((_long(torch, [[1], [2]]), _long(torch, [0, 2])), make((2, 1), dtype)),
                      name="broadcast indices and value")
    yield SampleInput(make((3,), dtype), ((_mask(torch, [True, False, True]),),
                                          make((2,), dtype)), name="mask")
    if dtype != "bool":
        yield SampleInput(make((4,), dtype), ((_long(torch, [1, 1, 3]),), make((3,), dtype)),
                          {"accumulate": True}, name="accumulate duplicates")


def gather_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (0, _long(torch, [[0, 2, 1, 0], [2, 2, 0, 1]])),
                      name="dim 0")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (1, _long(torch, [[3], [0]])),
                      name="dim 1 smaller")
    yield SampleInput(make((2, 3, 2), dtype), (-1, _long(torch, [[[1, 0]], [[0, 0]]])),
                      name="3-d")
    yield SampleInput(make((3,), dtype), (0, _long(torch, [])), name="empty index")
    yield SampleInput(make((), dtype), (0, _long(torch, 0)), name="0-d")


def scatter_samples(torch, dtype, make):
    idx = _long(torch, [[0, 1, 2, 0], [2, 0, 1, 1]])
    yield SampleInput(make((3, 4), dtype), (1, _long(torch, [[0, 3], [1, 2]]), make((2, 2),
                      dtype)), name="src")
    yield SampleInput(make((3, 4), dtype), (0, _long(torch, [[0, 1, 2, 1]]), make((2, 5),
                      dtype)), name="larger src")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (0, idx[:1], 2), name="value")
    if dtype != "bool":
        yield SampleInput(make((3, 4), dtype), (0, idx, make((2, 4), dtype)),
                          {"reduce": "add"}, name="reduce add")
        yield SampleInput(make((3, 4), dtype, low=-2, high=2), (0, idx, 2),
                          {"reduce": "multiply"}, name="reduce multiply value")


def scatter_add_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (0, _long(torch, [[0, 0, 2, 0], [0, 1, 2, 2]]),
                                             make((2, 4), dtype)), name="duplicates")
    yield SampleInput(make((5,), dtype, noncontiguous=True), (0, _long(torch, [4, 4, 0]),
                                                                make((3,), dtype)), name="1-d")


def scatter_reduce_samples(torch, dtype, make):
    idx = _long(torch, [[0, 0, 2, 0], [0, 1, 2, 2]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            if dtype == "bool" and reduce in ("mean", "prod", "sum"):
                continue
            low, high = (-2, 3) if reduce == "prod" else (None, None)
            yield SampleInput(make((3, 4), dtype, low=low, high=high),
                              (0, idx, make((2, 4), dtype, low=low, high=high), reduce),
                              {"include_self": include_self}, name=f"{reduce} {include_self}")


def index_select_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (0, _long(torch, [3, 0, 3])), name="dim 0")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True),
                      (1, torch.tensor([2, 1], dtype=torch.int32)), name="int32 dim 1")
    yield SampleInput(make((4, 3), dtype), (-1, _long(torch, [])), name="empty")
    yield SampleInput(make((4, 3), dtype), (0, _long(torch, 2)), name="0-d index")


def index_add_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (0, _long(torch, [3, 0, 3]), make((3, 3), dtype)),
                      name="duplicates")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True),
                      (1, _long(torch, [2]), make((4, 1), dtype)), {"alpha": 2}, name="alpha")


def index_copy_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (0, _long(torch, [3, 0]), make((2, 3), dtype)),
                      name="dim 0")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True),
                      (1, _long(torch, [2, 1]), make((4, 2), dtype)), name="dim 1")


def index_fill_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (0, _long(torch, [3, 0]), 1), name="int value")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True),
                      (1, _long(torch, [-1]), make((), dtype)), name="tensor value negative")


def index_reduce_samples(torch, dtype, make):
    idx = _long(torch, [0, 2, 0])
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            low, high = (-2, 3) if reduce == "prod" else (None, None)
            yield SampleInput(make((3, 2), dtype, low=low, high=high),
                              (0, idx, make((3, 2), dtype, low=low, high=high), reduce),
                              {"include_self": include_self}, name=f"{reduce} {include_self}")


def masked_fill_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (make((3, 4), "bool"), 1), name="same shape")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (make((4,), "bool"),
                                                                 make((), dtype)),
                      name="broadcast mask, tensor value")
    yield SampleInput(empty(torch, (0, 4), dtype), (make((4,), "bool"), 0), name="empty")


def masked_select_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (make((3, 4), "bool"),), name="same shape")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (make((4,), "bool"),),
                      name="broadcast mask")
    yield SampleInput(make((4,), dtype), (make((2, 1), "bool"),), name="broadcast input")
    yield SampleInput(make((), dtype), (_mask(torch, True),), name="0-d")


def masked_scatter_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (make((3, 4), "bool"), make((12,), dtype)),
                      name="same shape")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True),
                      (make((4,), "bool"), make((4, 4), dtype)), name="broadcast mask")


def take_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (_long(torch, [[0, 11], [-1, 5]]),), name="2-d")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (_long(torch, [7, 7]),),
                      name="noncontiguous")
    yield SampleInput(make((3,), dtype), (_long(torch, []),), name="empty index")


def take_along_dim_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (_long(torch, [[0, 3], [1, 1], [2, 0]]), 1),
                      name="dim 1")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (_long(torch, [[2, 0, 1, -1]]),
                                                                 0), name="broadcast dim 0")
    yield SampleInput(make((3, 4), dtype), (_long(torch, [5, 0]),), name="flattened")


def put_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (_long(torch, [0, 11, -1]), make((3,), dtype)),
                      name="overwrite")
    if dtype != "bool":
        yield SampleInput(make((3, 4), dtype, noncontiguous=True),
                          (_long(torch, [[1, 1]]), make((1, 2), dtype), True), name="accumulate")


def _sparse(torch, dtype, make, shape, noncontiguous=False):
    """Values in {-1, 0, 1}: a third of them zero, whatever the dtype."""
    return make(shape, "int64", low=-1, high=2, noncontiguous=noncontiguous).to(
        getattr(torch, dtype))


def nonzero_samples(torch, dtype, make):
    yield SampleInput(_sparse(torch, dtype, make, (3, 4)), name="2-d")
    yield SampleInput(_sparse(torch, dtype, make, (3, 4), True), name="strided")
    yield SampleInput(_sparse(torch, dtype, make, (3, 4)), (), {"as_tuple": True}, name="as_tuple")
    yield SampleInput(empty(torch, (0, 2), dtype), name="empty")
    yield SampleInput(_sparse(torch, dtype, make, ()), name="0-d")
    yield SampleInput(_sparse(torch, dtype, make, (5,)), (), {"as_tuple": True},
                      name="1-d as_tuple")
    yield SampleInput(torch.ones((), dtype=getattr(torch, dtype)), (), {"as_tuple": True},
                      name="0-d as_tuple")


def argwhere_samples(torch, dtype, make):
    yield SampleInput(_sparse(torch, dtype, make, (2, 3, 2)), name="3-d")
    yield SampleInput(make((0,), dtype), name="empty")


OPS: list[OpInfo] = [
    OpInfo("Tensor.__getitem__", getitem_samples, dtypes=ALL),
    OpInfo("index_put", index_put_samples, dtypes=ALL, method="index_put",
           inplace="index_put_"),
    OpInfo("gather", gather_samples, dtypes=ALL, method="gather", supports_out=True),
    OpInfo("scatter", scatter_samples, dtypes=ALL, method="scatter", inplace="scatter_"),
    OpInfo("scatter_add", scatter_add_samples, dtypes=NUMERIC, method="scatter_add",
           inplace="scatter_add_"),
    OpInfo("scatter_reduce", scatter_reduce_samples, dtypes=ALL, method="scatter_reduce",
           inplace="scatter_reduce_"),
    OpInfo("index_select", index_select_samples, dtypes=ALL, method="index_select",
           supports_out=True),
    OpInfo("index_add", index_add_samples, dtypes=NUMERIC, method="index_add",
           inplace="index_add_"),
    OpInfo("index_copy", index_copy_samples, dtypes=ALL, method="index_copy",
           inplace="index_copy_"),
    OpInfo("index_fill", index_fill_samples, dtypes=ALL, method="index_fill",
           inplace="index_fill_"),
    OpInfo("index_reduce", index_reduce_samples, dtypes=NUMERIC, method="index_reduce",
           inplace="index_reduce_"),
    OpInfo("masked_fill", masked_fill_samples, dtypes=ALL, method="masked_fill",
           inplace="masked_fill_"),
    OpInfo("masked_select", masked_select_samples, dtypes=ALL, method="masked_select",
           supports_out=True),
    OpInfo("masked_scatter", masked_scatter_samples, dtypes=ALL, method="masked_scatter",
           inplace="masked_scatter_"),
    OpInfo("take", take_samples, dtypes=ALL, method="take"),
    OpInfo("take_along_dim", take_along_dim_samples, dtypes=ALL, method="take_along_dim",
           supports_out=True),
    OpInfo("put", put_samples, dtypes=ALL, method="put", inplace="put_"),
    OpInfo("nonzero", nonzero_samples, dtypes=ALL, method="nonzero"),
    OpInfo("argwhere", argwhere_samples, dtypes=ALL, method="argwhere"),
]
