"""What outside programs and library test suites (nanoGPT, minGPT, pytorch/examples, einops,
safetensors, opt_einsum, torchmetrics), run unchanged, tripped over; each expectation is PyTorch
2.13's answer for the same call."""

import numpy as np

import torch

# -- empty storages and arrays keep their strides -------------------------------------------


def test_asarray_of_an_empty_storage_is_a_stride_one_byte_run():
    # safetensors loads a zero-sized tensor as asarray(storage[a:a]).view(dtype).reshape(shape)
    empty = torch.asarray(torch.UntypedStorage(8)[8:8], dtype=torch.uint8)
    assert empty.shape == (0,)
    assert empty.stride() == (1,)
    as_float = empty.view(torch.float32)
    assert as_float.shape == (0,)
    assert as_float.reshape(2, 0).shape == (2, 0)


def test_from_numpy_keeps_the_strides_of_an_empty_slice():
    sliced = np.zeros((4, 3), np.float32)[:, :0]
    assert torch.from_numpy(sliced).stride() == (3, 1)
    assert torch.from_numpy(np.empty((2, 0), np.float32)).stride() == (0, 0)
