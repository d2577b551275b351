"""Op database rows: shape ops (views and copies that move elements around)."""

from __future__ import annotations

from . import ALL, OpInfo, SampleInput


def empty(torch, shape, dtype):
    """A zero-size tensor of ``shape`` (the Maker builds through ``tolist()``, which keeps only
    the leading dims of an empty array)."""
    return torch.zeros(shape, dtype=getattr(torch, dtype))


def movedim_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 4), dtype), (0, 2), name="int")
    yield SampleInput(make((2, 3, 4), dtype), ((0, 1), (2, 0)), name="tuple")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), (-1, 0), name="noncontiguous")
    yield SampleInput(empty(torch, (0, 3), dtype), (1, 0), name="empty")
    yield SampleInput(make((), dtype), (0, 0), name="0-d")


def swap_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 4), dtype), (0, 2), name="3-d")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (-1, -2), name="noncontiguous")
    yield SampleInput(make((), dtype), (0, -1), name="0-d")


def split_samples(torch, dtype, make):
    yield SampleInput(make((5, 3), dtype), (2,), name="int")
    yield SampleInput(make((5, 3), dtype), ([1, 4],), name="sizes")
    yield SampleInput(make((4, 6), dtype, noncontiguous=True), (2, 1), name="dim 1")
    yield SampleInput(make((4, 6), dtype), ([3, 0, 3], -1), name="zero size piece")
    yield SampleInput(empty(torch, (0, 2), dtype), (3,), name="empty")


def chunk_samples(torch, dtype, make):
    yield SampleInput(make((5, 3), dtype), (2,), name="uneven")
    yield SampleInput(make((6,), dtype), (4,), name="fewer chunks")
    yield SampleInput(make((3, 8), dtype, noncontiguous=True), (4, 1), name="dim 1")
    yield SampleInput(make((0,), dtype), (3,), name="empty")


def unbind_samples(torch, dtype, make):
    yield SampleInput(make((3, 2), dtype), name="dim 0")
    yield SampleInput(make((3, 2), dtype, noncontiguous=True), (1,), name="dim 1")
    yield SampleInput(empty(torch, (0, 2), dtype), name="empty")


def tensor_split_samples(torch, dtype, make):
    yield SampleInput(make((7, 2), dtype), (3,), name="sections")
    yield SampleInput(make((7, 2), dtype), ([1, 5],), name="indices")
    yield SampleInput(make((2, 7), dtype), ([4, 2, 9], 1), name="unordered indices")
    yield SampleInput(make((2, 6), dtype, noncontiguous=True), (torch.tensor(4), -1),
                      name="tensor sections")
    yield SampleInput(make((6,), dtype), (torch.tensor([2, 3]),), name="tensor indices")
    yield SampleInput(make((0,), dtype), (2,), name="empty")


def hsplit_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (2,), name="2-d int")
    yield SampleInput(make((6,), dtype), ([1, 4],), name="1-d indices")
    yield SampleInput(make((2, 4, 3), dtype, noncontiguous=True), (4,), name="3-d")


def vsplit_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (2,), name="int")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True), ([3],), name="indices")


def dsplit_samples(torch, dtype, make):
    yield SampleInput(make((2, 2, 4), dtype), (2,), name="int")
    yield SampleInput(make((2, 2, 4), dtype, noncontiguous=True), ([1, 3],), name="indices")


def cat_samples(torch, dtype, make):
    yield SampleInput([make((2, 3), dtype), make((4, 3), dtype)], name="dim 0")
    yield SampleInput([make((2, 3), dtype), make((2, 1), dtype, noncontiguous=True),
                       make((2, 2), dtype)], (1,), name="dim 1 three")
    yield SampleInput([make((2, 3), dtype), make((0,), dtype)], (-1,), name="legacy empty")
    yield SampleInput([empty(torch, (2, 0, 3), dtype), make((2, 2, 3), dtype)], (1,),
                      name="zero size")
    yield SampleInput([make((3,), dtype)], name="single")
    yield SampleInput([make((2, 2), dtype), make((2, 2), "int32")], (), {"dim": 0},
                      name="promotes")


def stack_samples(torch, dtype, make):
    yield SampleInput([make((2, 3), dtype), make((2, 3), dtype)], name="dim 0")
    yield SampleInput([make((2, 3), dtype), make((2, 3), dtype, noncontiguous=True)], (2,),
                      name="last")
    yield SampleInput([make((), dtype), make((), dtype), make((), dtype)], name="0-d")
    yield SampleInput([empty(torch, (0, 2), dtype)], (-1,), name="empty")


def hstack_samples(torch, dtype, make):
    yield SampleInput([make((3,), dtype), make((2,), dtype)], name="1-d")
    yield SampleInput([make((2, 3), dtype), make((2, 1), dtype, noncontiguous=True)],
                      name="2-d")
    yield SampleInput([make((), dtype), make((2,), dtype)], name="0-d")


def vstack_samples(torch, dtype, make):
    yield SampleInput([make((3,), dtype), make((3,), dtype)], name="1-d")
    yield SampleInput([make((2, 3), dtype), make((1, 3), dtype, noncontiguous=True)],
                      name="2-d")
    yield SampleInput([make((2, 2, 2), dtype), make((1, 2, 2), dtype)], name="3-d")


def dstack_samples(torch, dtype, make):
    yield SampleInput([make((3,), dtype), make((3,), dtype)], name="1-d")
    yield SampleInput([make((2, 3), dtype), make((2, 3, 2), dtype)], name="mixed")
    yield SampleInput([make((), dtype), make((), dtype)], name="0-d")


def column_stack_samples(torch, dtype, make):
    yield SampleInput([make((3,), dtype), make((3, 2), dtype)], name="1-d and 2-d")
    yield SampleInput([make((), dtype), make((1,), dtype)], name="0-d")
    yield SampleInput([make((2, 3), dtype, noncontiguous=True)], name="single")


def flip_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 4), dtype), ((0, 2),), name="two dims")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), ([-1],), name="noncontiguous")
    yield SampleInput(make((5,), dtype), ((),), name="no dims")
    yield SampleInput(empty(torch, (0, 3), dtype), ((0, 1),), name="empty")
    yield SampleInput(make((), dtype), ((0,),), name="0-d")


def flip2d_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="2-d")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), name="3-d")


def flipud_samples(torch, dtype, make):
    yield from flip2d_samples(torch, dtype, make)
    yield SampleInput(make((4,), dtype), name="1-d")


def rot90_samples(torch, dtype, make):
    for k in (1, 2, 3, 4, -1):
        yield SampleInput(make((2, 3), dtype), (k,), name=f"k={k}")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), (1, [2, 0]), name="dims")


def roll_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (1,), name="flattened")
    yield SampleInput(make((3, 4), dtype), (-5, 1), name="dim negative shift")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), ((1, 2), (0, 1)), name="dims")
    yield SampleInput(empty(torch, (0, 2), dtype), (1, 0), name="empty")
    yield SampleInput(make((), dtype), (3,), name="0-d")


def repeat_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (2, 2), name="2-d")
    yield SampleInput(make((3,), dtype, noncontiguous=True), (2, 1, 2), name="more dims")
    yield SampleInput(make((2,), dtype), ((0, 3),), name="zero")
    yield SampleInput(make((), dtype), (3,), name="0-d")


def tile_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), ((2,),), name="fewer dims")
    yield SampleInput(make((3,), dtype, noncontiguous=True), ((2, 2),), name="more dims")
    yield SampleInput(make((), dtype), ((2, 1),), name="0-d")


def repeat_interleave_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (2,), name="flattened")
    yield SampleInput(make((2, 3), dtype, noncontiguous=True), (3,), {"dim": 1}, name="dim")
    yield SampleInput(make((3, 2), dtype), (torch.tensor([1, 0, 2]),), {"dim": 0},
                      name="tensor repeats")
    yield SampleInput(make((4,), dtype), (torch.tensor(2),), name="0-d tensor repeats")
    yield SampleInput(empty(torch, (0, 2), dtype), (2,), {"dim": 0}, name="empty")


def broadcast_to_samples(torch, dtype, make):
    yield SampleInput(make((3, 1), dtype), ((2, 3, 4),), name="expand")
    yield SampleInput(make((3,), dtype, noncontiguous=True), ((2, -1),), name="-1")
    yield SampleInput(make((), dtype), ((0, 2),), name="0-d to empty")


def broadcast_tensors_samples(torch, dtype, make):
    yield SampleInput(make((3, 1), dtype), (make((4,), dtype),), name="two")
    yield SampleInput(make((1,), dtype), (make((2, 1), dtype), make((), dtype)), name="three")


def meshgrid_samples(torch, dtype, make):
    for indexing in ("ij", "xy"):
        yield SampleInput([make((2,), dtype), make((3,), dtype)], (), {"indexing": indexing},
                          name=f"two {indexing}")
        yield SampleInput([make((2,), dtype), make((), dtype), make((4,), dtype)], (),
                          {"indexing": indexing}, name=f"three {indexing}")


def atleast_samples(torch, dtype, make):
    for shape in ((), (3,), (2, 3), (1, 2, 3, 1)):
        yield SampleInput(make(shape, dtype), name=f"{shape}")


def squeeze_samples(torch, dtype, make):
    yield SampleInput(make((1, 3, 1), dtype), name="all")
    yield SampleInput(make((1, 3, 1), dtype), (2,), name="dim")
    yield SampleInput(make((1, 3, 1), dtype), ((0, 1),), name="dims")
    yield SampleInput(make((), dtype), name="0-d")


def unsqueeze_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (1,), name="middle")
    yield SampleInput(make((2, 3), dtype, noncontiguous=True), (-1,), name="last")
    yield SampleInput(make((), dtype), (0,), name="0-d")


def flatten_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 4), dtype), name="all")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), (1,), name="from 1")
    yield SampleInput(make((2, 3, 4), dtype), (0, 1), name="range")
    yield SampleInput(make((), dtype), name="0-d")


def unflatten_samples(torch, dtype, make):
    yield SampleInput(make((6, 2), dtype), (0, (2, 3)), name="dim 0")
    yield SampleInput(make((2, 6), dtype), (-1, (3, -1)), name="infer")


def narrow_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (0, 1, 2), name="dim 0")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True), (1, -2, 2), name="negative start")
    yield SampleInput(make((4, 3), dtype), (0, 4, 0), name="empty")


def select_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (0, 1), name="dim 0")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True), (1, -1), name="negative")


def permute_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 4), dtype), ((2, 0, 1),), name="3-d")
    yield SampleInput(make((), dtype), ((),), name="0-d")


def t_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), name="2-d")
    yield SampleInput(make((3,), dtype), name="1-d")


def reshape_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), ((3, 2),), name="view")
    yield SampleInput(make((2, 4), dtype, noncontiguous=True), ((-1,),), name="copy")
    yield SampleInput(empty(torch, (0, 3), dtype), ((3, 0),), name="empty")


def as_strided_samples(torch, dtype, make):
    yield SampleInput(make((3, 3), dtype), ((2, 2), (1, 2)), name="window")
    yield SampleInput(make((3, 3), dtype), ((2,), (4,), 1), name="offset")


def diagonal_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="main")
    yield SampleInput(make((3, 4), dtype), (1,), name="offset")
    yield SampleInput(make((2, 3, 4), dtype), (-1, 2, 0), name="dims")


def diag_samples(torch, dtype, make):
    yield SampleInput(make((4,), dtype), name="vector")
    yield SampleInput(make((3,), dtype), (1,), name="vector above")
    yield SampleInput(make((3,), dtype), (-2,), name="vector below")
    yield SampleInput(make((3, 4), dtype), name="matrix")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (1,), name="matrix above")
    yield SampleInput(make((4, 3), dtype), (-2,), name="matrix below")
    yield SampleInput(make((2, 3), dtype), (5,), name="past the end")


def diag_embed_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), name="batched")
    yield SampleInput(make((2, 3), dtype), (1,), name="offset")
    yield SampleInput(make((2, 3), dtype), (-1, 0, 2), name="dims")
    yield SampleInput(make((3,), dtype, noncontiguous=True), (0, 1, 0), name="swapped dims")


def diagflat_samples(torch, dtype, make):
    yield SampleInput(make((2, 2), dtype), name="matrix")
    yield SampleInput(make((3,), dtype), (-1,), name="offset")


def ravel_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), name="contiguous")
    yield SampleInput(make((2, 3), dtype, noncontiguous=True), name="noncontiguous")
    yield SampleInput(make((), dtype), name="0-d")


def select_scatter_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (make((4,), dtype), 0, 1), name="dim 0")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (make((3,), dtype), 1, -1),
                      name="dim 1")


def slice_scatter_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (make((2, 3), dtype),), {"start": 1, "end": 3},
                      name="dim 0")
    yield SampleInput(make((3, 4), dtype), (make((3, 2), dtype), 1, 0, None, 2), name="step")


def diagonal_scatter_samples(torch, dtype, make):
    yield SampleInput(make((3, 3), dtype), (make((3,), dtype),), name="main")
    yield SampleInput(make((3, 4), dtype), (make((3,), dtype), 1), name="offset")


def vander_samples(torch, dtype, make):
    yield SampleInput(make((4,), dtype, -3, 3), name="square")
    yield SampleInput(make((3,), dtype, -3, 3), kwargs={"N": 5}, name="N")
    yield SampleInput(make((3,), dtype, -3, 3), kwargs={"N": 2, "increasing": True},
                      name="increasing")


def block_diag_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (make((1, 2), dtype),), name="two matrices")
    yield SampleInput(make((), dtype), (make((3,), dtype), make((2, 2), dtype)),
                      name="scalar, vector, matrix")


def cartesian_prod_samples(torch, dtype, make):
    yield SampleInput(make((3,), dtype), (make((2,), dtype),), name="two")
    yield SampleInput(make((2,), dtype), (make((2,), dtype), make((3,), dtype)), name="three")


def combinations_samples(torch, dtype, make):
    yield SampleInput(make((4,), dtype), name="pairs")
    yield SampleInput(make((4,), dtype), kwargs={"r": 3}, name="triples")
    yield SampleInput(make((3,), dtype), kwargs={"with_replacement": True},
                      name="with replacement")


OPS: list[OpInfo] = [
    OpInfo("movedim", movedim_samples, dtypes=ALL, method="movedim", view=True),
    OpInfo("moveaxis", movedim_samples, dtypes=ALL, method="moveaxis", view=True),
    OpInfo("swapaxes", swap_samples, dtypes=ALL, method="swapaxes", view=True),
    OpInfo("swapdims", swap_samples, dtypes=ALL, method="swapdims", view=True),
    OpInfo("transpose", swap_samples, dtypes=ALL, method="transpose", view=True),
    OpInfo("split", split_samples, dtypes=ALL, method="split", view=True),
    OpInfo("chunk", chunk_samples, dtypes=ALL, method="chunk", view=True),
    OpInfo("unbind", unbind_samples, dtypes=ALL, method="unbind", view=True),
    OpInfo("tensor_split", tensor_split_samples, dtypes=ALL, method="tensor_split", view=True),
    OpInfo("hsplit", hsplit_samples, dtypes=ALL, method="hsplit", view=True),
    OpInfo("vsplit", vsplit_samples, dtypes=ALL, method="vsplit", view=True),
    OpInfo("dsplit", dsplit_samples, dtypes=ALL, method="dsplit", view=True),
    OpInfo("cat", cat_samples, dtypes=ALL, supports_out=True),
    OpInfo("concat", cat_samples, dtypes=ALL, supports_out=True),
    OpInfo("concatenate", cat_samples, dtypes=ALL, supports_out=True),
    OpInfo("stack", stack_samples, dtypes=ALL, supports_out=True),
    OpInfo("hstack", hstack_samples, dtypes=ALL, supports_out=True),
    OpInfo("vstack", vstack_samples, dtypes=ALL, supports_out=True),
    OpInfo("row_stack", vstack_samples, dtypes=ALL, supports_out=True),
    OpInfo("dstack", dstack_samples, dtypes=ALL, supports_out=True),
    OpInfo("column_stack", column_stack_samples, dtypes=ALL, supports_out=True),
    OpInfo("flip", flip_samples, dtypes=ALL, method="flip"),
    OpInfo("fliplr", flip2d_samples, dtypes=ALL, method="fliplr"),
    OpInfo("flipud", flipud_samples, dtypes=ALL, method="flipud"),
    OpInfo("rot90", rot90_samples, dtypes=ALL, method="rot90"),
    OpInfo("roll", roll_samples, dtypes=ALL, method="roll"),
    OpInfo("repeat", repeat_samples, dtypes=ALL, function=False, method="repeat"),
    OpInfo("tile", tile_samples, dtypes=ALL, method="tile"),
    OpInfo("repeat_interleave", repeat_interleave_samples, dtypes=ALL,
           method="repeat_interleave"),
    OpInfo("broadcast_to", broadcast_to_samples, dtypes=ALL, method="broadcast_to", view=True),
    OpInfo("broadcast_tensors", broadcast_tensors_samples, dtypes=ALL, view=True),
    OpInfo("meshgrid", meshgrid_samples, dtypes=ALL, view=True),
    OpInfo("atleast_1d", atleast_samples, dtypes=ALL, view=True),
    OpInfo("atleast_2d", atleast_samples, dtypes=ALL, view=True),
    OpInfo("atleast_3d", atleast_samples, dtypes=ALL, view=True),
    OpInfo("squeeze", squeeze_samples, dtypes=ALL, method="squeeze", view=True),
    OpInfo("unsqueeze", unsqueeze_samples, dtypes=ALL, method="unsqueeze", view=True),
    OpInfo("flatten", flatten_samples, dtypes=ALL, method="flatten"),
    OpInfo("unflatten", unflatten_samples, dtypes=ALL, method="unflatten", view=True),
    OpInfo("narrow", narrow_samples, dtypes=ALL, method="narrow", view=True),
    OpInfo("narrow_copy", narrow_samples, dtypes=ALL, method="narrow_copy"),
    OpInfo("select", select_samples, dtypes=ALL, method="select", view=True),
    OpInfo("permute", permute_samples, dtypes=ALL, view=True),
    OpInfo("t", t_samples, dtypes=ALL, method="t", view=True),
    OpInfo("reshape", reshape_samples, dtypes=ALL),
    OpInfo("as_strided", as_strided_samples, dtypes=ALL, method="as_strided", view=True),
    OpInfo("diagonal", diagonal_samples, dtypes=ALL, method="diagonal", view=True),
    OpInfo("ravel", ravel_samples, dtypes=ALL, method="ravel"),
    OpInfo("select_scatter", select_scatter_samples, dtypes=ALL, method="select_scatter"),
    OpInfo("slice_scatter", slice_scatter_samples, dtypes=ALL, method="slice_scatter"),
    OpInfo("diagonal_scatter", diagonal_scatter_samples, dtypes=ALL,
           method="diagonal_scatter"),
    OpInfo("diag", diag_samples, dtypes=ALL, method="diag"),
    OpInfo("diag_embed", diag_embed_samples, dtypes=ALL, method="diag_embed"),
    OpInfo("diagflat", diagflat_samples, dtypes=ALL, method="diagflat"),
    OpInfo("vander", vander_samples, dtypes=("float32", "float64", "int64", "int32")),
    OpInfo("block_diag", block_diag_samples, dtypes=ALL),
    OpInfo("cartesian_prod", cartesian_prod_samples, dtypes=ALL),
    OpInfo("combinations", combinations_samples, dtypes=ALL),
]
