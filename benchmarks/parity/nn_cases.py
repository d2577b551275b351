"""The module, loss and ``nn.functional`` cases that ``nn_collect.py`` runs under both libraries.

Every case is ``name -> (constructor, call, mode)`` (functions have no constructor). The call is a
Python expression evaluated with ``m`` (the module, its weights and buffers already replaced by
seeded normals), ``F``, ``nn``, ``torch`` and these input makers, which draw from the case's own
numpy generator so that both libraries see identical numbers:

``R(*shape)``      normals, a leaf that requires grad (its gradient is compared)
``RA(*shape)``     like ``R`` but positive (``|x| + 0.5``)
``RU(*shape, lo=, hi=)`` like ``R`` but uniform in [lo, hi) (default [0.05, 0.95))
``RT(values)``     a leaf holding exactly ``values``
``N(*shape)``      normals, no grad
``U(*shape)``      uniform in [0.05, 0.95), no grad
``P(*shape)``      rows on the simplex (softmax of normals along the last dim), no grad
``S(*shape)``      signs (+1 / -1), no grad
``I(high, *shape)`` int64 in [0, high)
``B(*shape)``      bool, True with probability 0.3
``T(values)``      ``torch.tensor(values)`` (int64 for ints)
``DT``             the floating dtype of the run (float64, then float32)

``mode`` is "train" or "eval" (what ``module.train`` is set to before the call).
"""

from __future__ import annotations

Case = tuple[str | None, str, str]

REDUCTIONS = ("none", "mean", "sum")

# --- modules: nn.Module layers of issue 6 item 2 and the activations of item 3 ---------------
MODULES: dict[str, Case] = {
    # containers
    "Sequential_MLP": ("nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))",
                       "m(R(5, 6))", "train"),
    "Sequential_slice": ("nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3), nn.ReLU())",
                         "m[2:](m[:2](R(2, 4)))", "train"),
    "Sequential_OrderedDict": ("nn.Sequential(OrderedDict([('fc', nn.Linear(3, 4)), "
                               "('act', nn.Sigmoid())]))", "m(R(2, 3))", "train"),
    "ModuleList": ("nn.ModuleList([nn.Linear(3, 4), nn.Linear(4, 2)])",
                   "m[1](m[0](R(2, 3)).relu())", "train"),
    "ModuleDict": ("nn.ModuleDict({'a': nn.Linear(3, 4), 'b': nn.Linear(4, 2)})",
                   "m['b'](m['a'](R(2, 3)))", "train"),
    "ParameterList": ("nn.ParameterList([nn.Parameter(torch.zeros(3, 4)), "
                      "nn.Parameter(torch.zeros(4))])", "R(2, 3) @ m[0] + m[1]", "train"),
    "ParameterDict": ("nn.ParameterDict({'w': nn.Parameter(torch.zeros(3, 4)), "
                      "'b': nn.Parameter(torch.zeros(4))})", "R(2, 3) @ m['w'] + m['b']",
                      "train"),
    "CNN": ("nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), "
            "nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5))", "m(R(3, 1, 6, 6))",
            "train"),
    # linear
    "Identity": ("nn.Identity(3, unused=True)", "m(R(2, 3))", "train"),
    "Linear": ("nn.Linear(5, 3)", "m(R(4, 5))", "train"),
    "Linear_nobias_3d": ("nn.Linear(5, 3, bias=False)", "m(R(2, 4, 5))", "train"),
    "Linear_1d": ("nn.Linear(5, 3)", "m(R(5))", "train"),
    "Bilinear": ("nn.Bilinear(3, 4, 2)", "m(R(5, 3), R(5, 4))", "train"),
    "Bilinear_nobias": ("nn.Bilinear(3, 4, 2, bias=False)", "m(R(2, 5, 3), R(2, 5, 4))",
                        "train"),
    "LazyLinear": ("nn.LazyLinear(3)", "m(R(4, 5))", "train"),
    "LazyConv2d": ("nn.LazyConv2d(3, 3)", "m(R(1, 2, 5, 5))", "train"),
    # convolutions
    "Conv1d": ("nn.Conv1d(2, 3, 3, padding=1)", "m(R(2, 2, 7))", "train"),
    "Conv1d_stride_dilation": ("nn.Conv1d(2, 4, 3, stride=2, dilation=2, groups=2)",
                               "m(R(2, 2, 11))", "train"),
    "Conv1d_same_even": ("nn.Conv1d(2, 3, 4, padding='same', dilation=1)", "m(R(1, 2, 7))",
                         "train"),
    "Conv1d_valid_nobias": ("nn.Conv1d(2, 3, 3, padding='valid', bias=False)",
                            "m(R(1, 2, 7))", "train"),
    "Conv1d_reflect": ("nn.Conv1d(2, 3, 3, padding=2, padding_mode='reflect')",
                       "m(R(2, 2, 6))", "train"),
    "Conv1d_replicate": ("nn.Conv1d(2, 3, 3, padding=1, padding_mode='replicate')",
                         "m(R(2, 2, 6))", "train"),
    "Conv1d_circular": ("nn.Conv1d(2, 3, 3, padding=2, padding_mode='circular')",
                        "m(R(2, 2, 6))", "train"),
    "Conv1d_unbatched": ("nn.Conv1d(2, 3, 3)", "m(R(2, 6))", "train"),
    "Conv2d": ("nn.Conv2d(2, 4, 3, stride=2, padding=1)", "m(R(2, 2, 7, 6))", "train"),
    "Conv2d_same_reflect": ("nn.Conv2d(2, 3, 3, padding='same', padding_mode='reflect')",
                            "m(R(1, 2, 5, 5))", "train"),
    "Conv2d_same_even_dilated": ("nn.Conv2d(2, 3, (2, 4), padding='same', dilation=(2, 1))",
                                 "m(R(1, 2, 6, 7))", "train"),
    "Conv2d_groups_dilation": ("nn.Conv2d(4, 4, 3, groups=2, dilation=2)", "m(R(1, 4, 7, 7))",
                               "train"),
    "Conv2d_depthwise": ("nn.Conv2d(3, 6, 3, groups=3, padding=1, bias=False)",
                         "m(R(2, 3, 5, 5))", "train"),
    "Conv2d_tuple_stride": ("nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=(1, 0))",
                            "m(R(1, 2, 7, 6))", "train"),
    "Conv2d_replicate": ("nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode='replicate')",
                         "m(R(1, 2, 5, 6))", "train"),
    "Conv2d_circular": ("nn.Conv2d(2, 3, 3, padding=1, padding_mode='circular', stride=2)",
                        "m(R(1, 2, 5, 6))", "train"),
    "Conv2d_unbatched": ("nn.Conv2d(2, 3, 3)", "m(R(2, 5, 5))", "train"),
    "Conv3d": ("nn.Conv3d(1, 2, 2)", "m(R(1, 1, 3, 4, 4))", "train"),
    "Conv3d_stride_pad_groups": ("nn.Conv3d(2, 4, 3, stride=2, padding=1, groups=2)",
                                 "m(R(1, 2, 5, 5, 4))", "train"),
    "Conv3d_reflect": ("nn.Conv3d(1, 2, 3, padding=1, padding_mode='reflect')",
                       "m(R(1, 1, 4, 4, 4))", "train"),
    "Conv3d_circular_dilated": ("nn.Conv3d(1, 2, 2, padding=1, padding_mode='circular', "
                                "dilation=2)", "m(R(1, 1, 4, 5, 4))", "train"),
    "ConvTranspose1d": ("nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1, output_padding=1)",
                        "m(R(2, 2, 5))", "train"),
    "ConvTranspose1d_groups_dilation": ("nn.ConvTranspose1d(4, 6, 3, groups=2, dilation=2, "
                                        "bias=False)", "m(R(1, 4, 5))", "train"),
    "ConvTranspose2d": ("nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)",
                        "m(R(1, 2, 4, 4))", "train"),
    "ConvTranspose2d_groups": ("nn.ConvTranspose2d(4, 4, (3, 2), stride=(1, 2), groups=2, "
                               "dilation=(2, 1))", "m(R(2, 4, 4, 3))", "train"),
    "ConvTranspose2d_output_size": ("nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)",
                                    "m(R(1, 2, 4, 4), output_size=[8, 8])", "train"),
    "ConvTranspose3d": ("nn.ConvTranspose3d(2, 2, 2, stride=2, padding=(0, 1, 0))",
                        "m(R(1, 2, 2, 3, 3))", "train"),
    # pooling
    "MaxPool1d": ("nn.MaxPool1d(3, stride=2, padding=1)", "m(R(2, 3, 9))", "train"),
    "MaxPool1d_indices_ceil_dilation": ("nn.MaxPool1d(2, stride=2, dilation=2, ceil_mode=True, "
                                        "return_indices=True)", "m(R(2, 2, 10))", "train"),
    "MaxPool2d": ("nn.MaxPool2d(3, stride=2, padding=1)", "m(R(2, 3, 7, 7))", "train"),
    "MaxPool2d_ceil": ("nn.MaxPool2d(2, ceil_mode=True)", "m(R(1, 2, 5, 5))", "train"),
    "MaxPool2d_indices": ("nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, dilation=(1, 2), "
                          "return_indices=True)", "m(R(2, 2, 7, 7))", "train"),
    "MaxPool2d_unbatched": ("nn.MaxPool2d(2)", "m(R(3, 6, 6))", "train"),
    "MaxPool3d": ("nn.MaxPool3d(2, stride=2, ceil_mode=True, return_indices=True)",
                  "m(R(1, 2, 5, 5, 3))", "train"),
    "MaxPool3d_pad": ("nn.MaxPool3d(3, stride=2, padding=1)", "m(R(1, 1, 5, 6, 5))", "train"),
    "AvgPool1d": ("nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True)", "m(R(2, 3, 8))",
                  "train"),
    "AvgPool1d_exclude_pad": ("nn.AvgPool1d(4, stride=3, padding=2, count_include_pad=False)",
                              "m(R(2, 3, 9))", "train"),
    "AvgPool2d": ("nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)",
                  "m(R(2, 3, 7, 7))", "train"),
    "AvgPool2d_ceil_include_pad": ("nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True)",
                                   "m(R(1, 2, 6, 6))", "train"),
    "AvgPool2d_divisor": ("nn.AvgPool2d(2, divisor_override=3)", "m(R(1, 2, 6, 5))", "train"),
    "AvgPool3d": ("nn.AvgPool3d(2, stride=(2, 1, 2), padding=1, ceil_mode=True)",
                  "m(R(1, 2, 4, 5, 4))", "train"),
    "AvgPool3d_exclude_divisor": ("nn.AvgPool3d(3, padding=1, count_include_pad=False)",
                                  "m(R(1, 1, 6, 6, 6))", "train"),
    "AdaptiveAvgPool1d": ("nn.AdaptiveAvgPool1d(4)", "m(R(2, 3, 10))", "train"),
    "AdaptiveAvgPool2d": ("nn.AdaptiveAvgPool2d((3, 2))", "m(R(2, 3, 7, 5))", "train"),
    "AdaptiveAvgPool2d_None": ("nn.AdaptiveAvgPool2d((None, 3))", "m(R(1, 2, 4, 7))", "train"),
    "AdaptiveAvgPool3d": ("nn.AdaptiveAvgPool3d((2, 3, 1))", "m(R(1, 2, 5, 7, 3))", "train"),
    "AdaptiveMaxPool1d": ("nn.AdaptiveMaxPool1d(3, return_indices=True)", "m(R(2, 3, 10))",
                          "train"),
    "AdaptiveMaxPool2d": ("nn.AdaptiveMaxPool2d((3, 2), return_indices=True)",
                          "m(R(2, 2, 7, 5))", "train"),
    "AdaptiveMaxPool2d_plain": ("nn.AdaptiveMaxPool2d(4)", "m(R(1, 2, 9, 6))", "train"),
    "AdaptiveMaxPool3d": ("nn.AdaptiveMaxPool3d((2, 2, 3))", "m(R(1, 2, 5, 4, 6))", "train"),
    "MaxUnpool1d": ("nn.MaxUnpool1d(2)", "m(*F.max_pool1d(R(1, 2, 8), 2, return_indices=True))",
                    "train"),
    "MaxUnpool2d": ("nn.MaxUnpool2d(2, stride=2)",
                    "m(*F.max_pool2d(R(1, 2, 6, 6), 2, return_indices=True))", "train"),
    "MaxUnpool2d_output_size": ("nn.MaxUnpool2d(2, stride=2)",
                                "m(*F.max_pool2d(R(1, 2, 7, 7), 2, return_indices=True), "
                                "output_size=[7, 7])", "train"),
    "MaxUnpool3d": ("nn.MaxUnpool3d(2)",
                    "m(*F.max_pool3d(R(1, 1, 4, 4, 4), 2, return_indices=True))", "train"),
    "LPPool1d": ("nn.LPPool1d(2, 3, stride=2)", "m(RA(2, 3, 9))", "train"),
    "LPPool2d": ("nn.LPPool2d(2, 2)", "m(R(1, 2, 6, 6))", "train"),
    "LPPool2d_p1.5_ceil": ("nn.LPPool2d(1.5, (3, 2), stride=2, ceil_mode=True)",
                           "m(RA(1, 2, 7, 6))", "train"),
    "LPPool3d": ("nn.LPPool3d(3, 2)", "m(RA(1, 1, 4, 4, 4))", "train"),
    # normalization
    "BatchNorm1d_train": ("nn.BatchNorm1d(4)", "m(R(6, 4))", "train"),
    "BatchNorm1d_3d_train": ("nn.BatchNorm1d(3, momentum=0.3)", "m(R(4, 3, 5))", "train"),
    "BatchNorm1d_eval": ("nn.BatchNorm1d(4)", "m(R(6, 4))", "eval"),
    "BatchNorm1d_momentum_None": ("nn.BatchNorm1d(4, momentum=None)", "m(R(6, 4))", "train"),
    "BatchNorm1d_no_stats_train": ("nn.BatchNorm1d(4, track_running_stats=False)",
                                   "m(R(6, 4))", "train"),
    "BatchNorm1d_no_stats_eval": ("nn.BatchNorm1d(4, track_running_stats=False, affine=False)",
                                  "m(R(6, 4))", "eval"),
    "BatchNorm2d_train": ("nn.BatchNorm2d(3)", "m(R(4, 3, 5, 5))", "train"),
    "BatchNorm2d_eval": ("nn.BatchNorm2d(3)", "m(R(4, 3, 5, 5))", "eval"),
    "BatchNorm2d_momentum_None": ("nn.BatchNorm2d(3, momentum=None, eps=1e-3)",
                                  "m(R(2, 3, 4, 4))", "train"),
    "BatchNorm2d_no_affine": ("nn.BatchNorm2d(3, affine=False)", "m(R(2, 3, 4, 4))", "train"),
    "BatchNorm2d_no_bias": ("nn.BatchNorm2d(3, bias=False)", "m(R(2, 3, 4, 4))", "train"),
    "BatchNorm1d_no_bias_eval": ("nn.BatchNorm1d(3, bias=False)", "m(R(4, 3))", "eval"),
    "InstanceNorm2d_affine_no_bias": ("nn.InstanceNorm2d(2, affine=True, bias=False)",
                                      "m(R(2, 2, 3, 3))", "train"),
    "BatchNorm3d_train": ("nn.BatchNorm3d(2)", "m(R(2, 2, 3, 4, 3))", "train"),
    "BatchNorm3d_eval": ("nn.BatchNorm3d(2)", "m(R(2, 2, 3, 4, 3))", "eval"),
    "LayerNorm": ("nn.LayerNorm([4, 5])", "m(R(3, 4, 5))", "train"),
    "LayerNorm_no_affine": ("nn.LayerNorm(5, elementwise_affine=False, eps=1e-3)",
                            "m(R(3, 4, 5))", "train"),
    "LayerNorm_no_bias": ("nn.LayerNorm(5, bias=False)", "m(R(3, 5))", "train"),
    "GroupNorm": ("nn.GroupNorm(2, 4)", "m(R(3, 4, 5))", "train"),
    "GroupNorm_4d_no_affine": ("nn.GroupNorm(3, 6, affine=False)", "m(R(2, 6, 3, 3))",
                               "train"),
    "RMSNorm": ("nn.RMSNorm([4, 5])", "m(R(3, 4, 5))", "train"),
    "RMSNorm_eps_no_affine": ("nn.RMSNorm(5, eps=1e-2, elementwise_affine=False)",
                              "m(R(3, 5))", "train"),
    "InstanceNorm1d": ("nn.InstanceNorm1d(3)", "m(R(2, 3, 6))", "train"),
    "InstanceNorm1d_affine_stats_train": ("nn.InstanceNorm1d(3, affine=True, "
                                          "track_running_stats=True)", "m(R(2, 3, 6))",
                                          "train"),
    "InstanceNorm1d_stats_eval": ("nn.InstanceNorm1d(3, track_running_stats=True)",
                                  "m(R(2, 3, 6))", "eval"),
    "InstanceNorm1d_unbatched": ("nn.InstanceNorm1d(3, affine=True)", "m(R(3, 6))", "train"),
    "InstanceNorm2d": ("nn.InstanceNorm2d(2, affine=True)", "m(R(2, 2, 4, 5))", "train"),
    "InstanceNorm2d_stats_train": ("nn.InstanceNorm2d(2, track_running_stats=True, "
                                   "momentum=0.2)", "m(R(3, 2, 4, 4))", "train"),
    "InstanceNorm2d_stats_eval": ("nn.InstanceNorm2d(2, affine=True, "
                                  "track_running_stats=True)", "m(R(3, 2, 4, 4))", "eval"),
    "InstanceNorm3d": ("nn.InstanceNorm3d(2, affine=True)", "m(R(1, 2, 3, 4, 3))", "train"),
    "LocalResponseNorm": ("nn.LocalResponseNorm(3)", "m(R(2, 5, 4, 4))", "train"),
    "LocalResponseNorm_3d": ("nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0)",
                             "m(R(2, 6, 5))", "train"),
    "LocalResponseNorm_5d": ("nn.LocalResponseNorm(4)", "m(R(1, 5, 2, 3, 3))", "train"),
    # dropout family (deterministic settings)
    "Dropout_eval": ("nn.Dropout(0.5)", "m(R(4, 6))", "eval"),
    "Dropout_p0_train": ("nn.Dropout(0.0)", "m(R(4, 6))", "train"),
    "Dropout1d_eval": ("nn.Dropout1d(0.5)", "m(R(2, 3, 4))", "eval"),
    "Dropout2d_eval": ("nn.Dropout2d(0.3)", "m(R(2, 3, 4, 4))", "eval"),
    "Dropout2d_p0_train": ("nn.Dropout2d(0.0)", "m(R(2, 3, 4, 4))", "train"),
    "Dropout3d_eval": ("nn.Dropout3d(0.3)", "m(R(2, 3, 2, 2, 2))", "eval"),
    "AlphaDropout_eval": ("nn.AlphaDropout(0.4)", "m(R(4, 6))", "eval"),
    "AlphaDropout_p0_train": ("nn.AlphaDropout(0.0)", "m(R(4, 6))", "train"),
    "FeatureAlphaDropout_eval": ("nn.FeatureAlphaDropout(0.4)", "m(R(2, 3, 4))", "eval"),
    # sparse
    "Embedding": ("nn.Embedding(10, 4, padding_idx=0)", "m(I(10, 3, 5))", "train"),
    "Embedding_max_norm": ("nn.Embedding(10, 4, max_norm=1.0)", "m(I(10, 3, 5))", "train"),
    "Embedding_max_norm_p1_padding": ("nn.Embedding(8, 3, max_norm=0.7, norm_type=1.0, "
                                      "padding_idx=-1)", "m(I(8, 2, 6))", "train"),
    "Embedding_scale_grad_by_freq": ("nn.Embedding(6, 3, scale_grad_by_freq=True)",
                                     "m(T([[0, 1, 1, 3], [3, 3, 3, 5]]))", "train"),
    "Embedding_from_pretrained": ("nn.Embedding.from_pretrained(torch.zeros(7, 3), "
                                  "freeze=False, padding_idx=2)", "m(I(7, 4))", "train"),
    "EmbeddingBag_mean_2d": ("nn.EmbeddingBag(10, 4)", "m(I(10, 3, 5))", "train"),
    "EmbeddingBag_sum_offsets": ("nn.EmbeddingBag(10, 4, mode='sum')",
                                 "m(I(10, 9), T([0, 2, 2, 6]))", "train"),
    "EmbeddingBag_max_offsets": ("nn.EmbeddingBag(10, 4, mode='max')",
                                 "m(I(10, 9), T([0, 3, 4, 6]))", "train"),
    "EmbeddingBag_per_sample_weights": ("nn.EmbeddingBag(10, 4, mode='sum')",
                                        "m(I(10, 8), T([0, 3, 5]), per_sample_weights=R(8))",
                                        "train"),
    "EmbeddingBag_include_last_offset": ("nn.EmbeddingBag(10, 3, mode='mean', "
                                         "include_last_offset=True)",
                                         "m(I(10, 8), T([0, 3, 3, 8]))", "train"),
    "EmbeddingBag_padding_idx": ("nn.EmbeddingBag(6, 3, mode='mean', padding_idx=1)",
                                 "m(T([[1, 2, 1], [1, 1, 1], [0, 3, 5]]))", "train"),
    "EmbeddingBag_max_norm": ("nn.EmbeddingBag(6, 3, max_norm=0.5)", "m(I(6, 2, 4))",
                              "train"),
    # recurrent
    "RNN": ("nn.RNN(3, 4, nonlinearity='relu')", "m(R(5, 2, 3))", "train"),
    "RNN_tanh_2layer_bi_h0": ("nn.RNN(3, 4, num_layers=2, bidirectional=True)",
                              "m(R(5, 2, 3), R(4, 2, 4))", "train"),
    "RNN_batch_first_nobias": ("nn.RNN(3, 4, batch_first=True, bias=False)",
                               "m(R(2, 5, 3))", "train"),
    "RNN_unbatched": ("nn.RNN(3, 4)", "m(R(5, 3), R(1, 4))", "train"),
    "LSTM": ("nn.LSTM(4, 5, num_layers=2, batch_first=True)", "m(R(2, 6, 4))", "train"),
    "LSTM_bidirectional": ("nn.LSTM(3, 4, bidirectional=True)", "m(R(5, 2, 3))", "train"),
    "LSTM_proj": ("nn.LSTM(3, 5, proj_size=2, num_layers=2)",
                  "m(R(4, 2, 3), (R(2, 2, 2), R(2, 2, 5)))", "train"),
    "LSTM_proj_bidirectional": ("nn.LSTM(3, 4, proj_size=3, bidirectional=True, "
                                "batch_first=True)", "m(R(2, 4, 3))", "train"),
    "LSTM_unbatched": ("nn.LSTM(3, 4)", "m(R(5, 3))", "train"),
    "LSTM_packed": ("nn.LSTM(3, 4, bidirectional=True)",
                    "m(nn.utils.rnn.pack_padded_sequence(R(5, 3, 3), [5, 3, 2]))", "train"),
    "LSTM_packed_unsorted": ("nn.LSTM(3, 4, num_layers=2)",
                             "nn.utils.rnn.pad_packed_sequence(m(nn.utils.rnn."
                             "pack_padded_sequence(R(3, 5, 3), [2, 5, 3], batch_first=True, "
                             "enforce_sorted=False))[0], batch_first=True)", "train"),
    "GRU": ("nn.GRU(4, 5)", "m(R(6, 2, 4))", "train"),
    "GRU_2layer_bi_batch_first_h0": ("nn.GRU(3, 4, num_layers=2, bidirectional=True, "
                                     "batch_first=True)", "m(R(2, 5, 3), R(4, 2, 4))",
                                     "train"),
    "GRU_packed": ("nn.GRU(3, 4)",
                   "m(nn.utils.rnn.pack_sequence([R(4, 3), R(2, 3), R(3, 3)], "
                   "enforce_sorted=False))", "train"),
    "GRU_eval_dropout": ("nn.GRU(3, 4, num_layers=2, dropout=0.5)", "m(R(4, 2, 3))", "eval"),
    "RNNCell": ("nn.RNNCell(3, 4)", "m(R(2, 3), R(2, 4))", "train"),
    "RNNCell_relu_nohidden": ("nn.RNNCell(3, 4, nonlinearity='relu', bias=False)",
                              "m(R(2, 3))", "train"),
    "LSTMCell": ("nn.LSTMCell(3, 4)", "m(R(2, 3), (R(2, 4), R(2, 4)))", "train"),
    "LSTMCell_unbatched": ("nn.LSTMCell(3, 4)", "m(R(3))", "train"),
    "GRUCell": ("nn.GRUCell(3, 4)", "m(R(2, 3), R(2, 4))", "train"),
    "GRUCell_unbatched_nobias": ("nn.GRUCell(3, 4, bias=False)", "m(R(3), R(4))", "train"),
    # attention and transformers
    "MultiheadAttention": ("nn.MultiheadAttention(8, 2, batch_first=True)",
                           "m(R(2, 5, 8), R(2, 5, 8), R(2, 5, 8))", "train"),
    "MHA_seq_first_bool_mask": ("nn.MultiheadAttention(8, 2)",
                                "m(R(4, 2, 8), R(5, 2, 8), R(5, 2, 8), "
                                "attn_mask=T([[False, True, False, False, True]] * 4))",
                                "train"),
    "MHA_float_mask_kpm": ("nn.MultiheadAttention(6, 3, batch_first=True)",
                           "m(R(2, 4, 6), R(2, 5, 6), R(2, 5, 6), attn_mask=N(4, 5), "
                           "key_padding_mask=T([[False] * 4 + [True], [False] * 5]))", "train"),
    "MHA_float_kpm": ("nn.MultiheadAttention(6, 2)",
                      "m(R(3, 2, 6), R(4, 2, 6), R(4, 2, 6), key_padding_mask=N(2, 4))",
                      "train"),
    "MHA_3d_mask_per_head": ("nn.MultiheadAttention(4, 2, batch_first=True)",
                             "m(R(2, 3, 4), R(2, 3, 4), R(2, 3, 4), attn_mask=N(4, 3, 3))",
                             "train"),
    "MHA_kdim_vdim": ("nn.MultiheadAttention(8, 2, kdim=5, vdim=3, batch_first=True)",
                      "m(R(2, 4, 8), R(2, 6, 5), R(2, 6, 3))", "train"),
    "MHA_weights_per_head": ("nn.MultiheadAttention(8, 4)",
                             "m(R(3, 2, 8), R(5, 2, 8), R(5, 2, 8), "
                             "average_attn_weights=False)", "train"),
    "MHA_no_weights": ("nn.MultiheadAttention(8, 2, bias=False)",
                       "m(R(3, 2, 8), R(3, 2, 8), R(3, 2, 8), need_weights=False)", "train"),
    "MHA_bias_kv_zero_attn": ("nn.MultiheadAttention(4, 2, add_bias_kv=True, "
                              "add_zero_attn=True)", "m(R(3, 2, 4), R(3, 2, 4), R(3, 2, 4))",
                              "train"),
    "MHA_causal": ("nn.MultiheadAttention(4, 2, batch_first=True)",
                   "m(R(2, 4, 4), R(2, 4, 4), R(2, 4, 4), is_causal=True, "
                   "attn_mask=nn.Transformer.generate_square_subsequent_mask(4, "
                   "dtype=DT))", "train"),
    "MHA_unbatched": ("nn.MultiheadAttention(4, 2)", "m(R(3, 4), R(5, 4), R(5, 4))", "train"),
    "MHA_eval": ("nn.MultiheadAttention(4, 2, dropout=0.5, batch_first=True)",
                 "m(R(2, 3, 4), R(2, 3, 4), R(2, 3, 4))", "eval"),
    "TransformerEncoderLayer": ("nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, "
                                "dropout=0.0, batch_first=True)", "m(R(2, 5, 8))", "train"),
    "TransformerEncoderLayer_norm_first_gelu": ("nn.TransformerEncoderLayer(8, 2, "
                                                "dim_feedforward=12, dropout=0.0, "
                                                "activation='gelu', norm_first=True)",
                                                "m(R(5, 2, 8), src_key_padding_mask="
                                                "T([[False] * 5, [False] * 3 + [True] * 2]))",
                                                "train"),
    "TransformerEncoder": ("nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0, "
                           "batch_first=True), 2, norm=nn.LayerNorm(8), "
                           "enable_nested_tensor=False)",
                           "m(R(2, 5, 8), mask=nn.Transformer.generate_square_subsequent_mask("
                           "5, dtype=DT), is_causal=True)", "train"),
    "TransformerDecoderLayer": ("nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, "
                                "dropout=0.0, batch_first=True)",
                                "m(R(2, 4, 8), R(2, 5, 8))", "train"),
    "TransformerDecoderLayer_masks_norm_first": ("nn.TransformerDecoderLayer(8, 2, 12, 0.0, "
                                                 "activation='gelu', norm_first=True)",
                                                 "m(R(4, 2, 8), R(3, 2, 8), tgt_mask=nn."
                                                 "Transformer.generate_square_subsequent_mask("
                                                 "4, dtype=DT), "
                                                 "memory_key_padding_mask=T([[False, False, "
                                                 "True], [False] * 3]))", "train"),
    "TransformerDecoder": ("nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, 0.0), "
                           "2, norm=nn.LayerNorm(8))", "m(R(4, 2, 8), R(5, 2, 8))", "train"),
    "Transformer": ("nn.Transformer(8, 2, 1, 1, 16, 0.0, batch_first=True)",
                    "m(R(2, 5, 8), R(2, 4, 8), tgt_mask=nn.Transformer."
                    "generate_square_subsequent_mask(4, dtype=DT), "
                    "src_key_padding_mask=T([[False] * 5, [False] * 4 + [True]]))", "train"),
    "Transformer_eval": ("nn.Transformer(8, 2, 2, 1, 16, 0.3)",
                         "m(R(5, 2, 8), R(3, 2, 8))", "eval"),
    # shapes, upsampling, padding, distances
    "Flatten": ("nn.Flatten()", "m(R(2, 3, 4))", "train"),
    "Flatten_dims": ("nn.Flatten(0, 1)", "m(R(2, 3, 4))", "train"),
    "Unflatten": ("nn.Unflatten(1, (2, 3))", "m(R(4, 6, 2))", "train"),
    "Upsample_nearest": ("nn.Upsample(scale_factor=2)", "m(R(1, 2, 3, 4))", "train"),
    "Upsample_bilinear_align": ("nn.Upsample(size=(5, 7), mode='bilinear', "
                                "align_corners=True)", "m(R(1, 2, 3, 4))", "train"),
    "Upsample_bicubic": ("nn.Upsample(scale_factor=1.5, mode='bicubic')", "m(R(1, 1, 4, 4))",
                         "train"),
    "Upsample_trilinear": ("nn.Upsample(scale_factor=(2, 1, 1.5), mode='trilinear')",
                           "m(R(1, 1, 2, 3, 4))", "train"),
    "Upsample_linear": ("nn.Upsample(size=7, mode='linear')", "m(R(2, 2, 4))", "train"),
    "UpsamplingNearest2d": ("nn.UpsamplingNearest2d(scale_factor=3)", "m(R(1, 2, 2, 3))",
                            "train"),
    "UpsamplingBilinear2d": ("nn.UpsamplingBilinear2d(size=(4, 6))", "m(R(1, 2, 3, 3))",
                             "train"),
    "PixelShuffle": ("nn.PixelShuffle(2)", "m(R(2, 8, 3, 3))", "train"),
    "PixelUnshuffle": ("nn.PixelUnshuffle(2)", "m(R(2, 2, 4, 6))", "train"),
    "ChannelShuffle": ("nn.ChannelShuffle(3)", "m(R(2, 6, 2, 2))", "train"),
    "Fold": ("nn.Fold(output_size=(4, 5), kernel_size=2)", "m(R(2, 12, 12))", "train"),
    "Fold_stride_pad_dilation": ("nn.Fold((5, 5), (2, 3), dilation=(1, 2), padding=1, "
                                 "stride=2)", "m(R(1, 12, 6))", "train"),
    "Unfold": ("nn.Unfold(kernel_size=(2, 3))", "m(R(2, 3, 4, 5))", "train"),
    "Unfold_stride_pad_dilation": ("nn.Unfold(3, dilation=2, padding=1, stride=(1, 2))",
                                   "m(R(1, 2, 6, 7))", "train"),
    "ZeroPad1d": ("nn.ZeroPad1d((1, 2))", "m(R(2, 3, 4))", "train"),
    "ZeroPad2d": ("nn.ZeroPad2d((1, 0, 2, -1))", "m(R(1, 2, 3, 4))", "train"),
    "ZeroPad3d": ("nn.ZeroPad3d(1)", "m(R(1, 1, 2, 3, 2))", "train"),
    "ConstantPad1d": ("nn.ConstantPad1d(2, 3.5)", "m(R(2, 4))", "train"),
    "ConstantPad2d": ("nn.ConstantPad2d((1, 2, 0, 1), -1.0)", "m(R(1, 2, 3, 3))", "train"),
    "ConstantPad3d": ("nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.5)", "m(R(1, 2, 2, 2, 2))",
                      "train"),
    "ReflectionPad1d": ("nn.ReflectionPad1d((2, 1))", "m(R(2, 3, 4))", "train"),
    "ReflectionPad2d": ("nn.ReflectionPad2d((1, 2, 2, 0))", "m(R(1, 2, 3, 4))", "train"),
    "ReflectionPad3d": ("nn.ReflectionPad3d(1)", "m(R(1, 1, 2, 3, 3))", "train"),
    "ReplicationPad1d": ("nn.ReplicationPad1d((3, 1))", "m(R(2, 3, 4))", "train"),
    "ReplicationPad2d": ("nn.ReplicationPad2d(2)", "m(R(1, 2, 3, 3))", "train"),
    "ReplicationPad3d": ("nn.ReplicationPad3d((1, 0, 2, 1, 0, 1))", "m(R(1, 1, 2, 2, 3))",
                         "train"),
    "CircularPad1d": ("nn.CircularPad1d((2, 1))", "m(R(2, 3, 4))", "train"),
    "CircularPad2d": ("nn.CircularPad2d((1, 2, 2, 0))", "m(R(1, 2, 3, 4))", "train"),
    "CircularPad3d": ("nn.CircularPad3d(1)", "m(R(1, 1, 2, 3, 3))", "train"),
    "CosineSimilarity": ("nn.CosineSimilarity(dim=1, eps=1e-6)", "m(R(4, 5), R(4, 5))",
                         "train"),
    "CosineSimilarity_broadcast": ("nn.CosineSimilarity(dim=-1)", "m(R(3, 1, 4), R(2, 4))",
                                   "train"),
    "PairwiseDistance": ("nn.PairwiseDistance()", "m(R(4, 5), R(4, 5))", "train"),
    "PairwiseDistance_p1_keepdim": ("nn.PairwiseDistance(p=1.0, eps=1e-3, keepdim=True)",
                                    "m(R(4, 5), R(5))", "train"),
    "PairwiseDistance_inf": ("nn.PairwiseDistance(p=float('inf'))", "m(R(3, 4), R(3, 4))",
                             "train"),
}

# every activation of item 3 (constructor, input)
_ACTIVATIONS: dict[str, str] = {
    "ReLU": "nn.ReLU()",
    "ReLU6": "nn.ReLU6()",
    "LeakyReLU": "nn.LeakyReLU(0.2)",
    "LeakyReLU_default": "nn.LeakyReLU()",
    "PReLU": "nn.PReLU(3)",
    "PReLU_shared": "nn.PReLU(init=0.1)",
    "RReLU_eval": "nn.RReLU(0.1, 0.3)",
    "ELU": "nn.ELU()",
    "ELU_alpha": "nn.ELU(alpha=0.5)",
    "SELU": "nn.SELU()",
    "CELU": "nn.CELU(alpha=1.5)",
    "GELU": "nn.GELU()",
    "GELU_tanh": "nn.GELU(approximate='tanh')",
    "SiLU": "nn.SiLU()",
    "Mish": "nn.Mish()",
    "Sigmoid": "nn.Sigmoid()",
    "Hardsigmoid": "nn.Hardsigmoid()",
    "Tanh": "nn.Tanh()",
    "Hardtanh": "nn.Hardtanh(-0.5, 0.8)",
    "Hardswish": "nn.Hardswish()",
    "Softplus": "nn.Softplus(beta=2.0)",
    "Softplus_threshold": "nn.Softplus(beta=0.5, threshold=1.0)",
    "Softsign": "nn.Softsign()",
    "Tanhshrink": "nn.Tanhshrink()",
    "Softshrink": "nn.Softshrink(0.3)",
    "Hardshrink": "nn.Hardshrink(0.4)",
    "Threshold": "nn.Threshold(0.1, -2.0)",
    "LogSigmoid": "nn.LogSigmoid()",
    "Softmax": "nn.Softmax(dim=1)",
    "Softmax_dim0": "nn.Softmax(dim=0)",
    "LogSoftmax": "nn.LogSoftmax(dim=-1)",
    "Softmin": "nn.Softmin(dim=1)",
    "Softmax2d": "nn.Softmax2d()",
    "GLU": "nn.GLU()",
    "GLU_dim1": "nn.GLU(dim=1)",
}
for _name, _ctor in _ACTIVATIONS.items():
    _shape = "R(2, 3, 4)" if _name.startswith(("PReLU", "GLU", "Softmax2d")) else "R(4, 6)"
    _shape = "R(2, 4, 3)" if _name == "GLU_dim1" else _shape
    MODULES[_name] = (_ctor, f"m({_shape} * 2)", "eval" if _name == "RReLU_eval" else "train")

# --- losses: every loss of item 3, every reduction --------------------------------------------
# name -> (constructor with {r} for the reduction, call)
_LOSSES: dict[str, tuple[str, str]] = {
    "MSELoss": ("nn.MSELoss(reduction={r})", "m(R(4, 3), N(4, 3))"),
    "MSELoss_broadcast_target": ("nn.MSELoss(reduction={r})", "m(R(4, 3), N(3))"),
    "L1Loss": ("nn.L1Loss(reduction={r})", "m(R(4, 3), N(4, 3))"),
    "SmoothL1Loss": ("nn.SmoothL1Loss(reduction={r}, beta=0.5)", "m(R(4, 3), N(4, 3))"),
    "SmoothL1Loss_beta0": ("nn.SmoothL1Loss(reduction={r}, beta=0.0)", "m(R(4, 3), N(4, 3))"),
    "HuberLoss": ("nn.HuberLoss(reduction={r}, delta=0.7)", "m(R(4, 3), N(4, 3))"),
    "CrossEntropyLoss": ("nn.CrossEntropyLoss(reduction={r})", "m(R(5, 4), I(4, 5))"),
    "CrossEntropyLoss_weight_ignore": ("nn.CrossEntropyLoss(weight=U(4), ignore_index=2, "
                                       "reduction={r})", "m(R(6, 4), I(4, 6))"),
    "CrossEntropyLoss_smoothing": ("nn.CrossEntropyLoss(label_smoothing=0.1, reduction={r})",
                                   "m(R(5, 4), I(4, 5))"),
    "CrossEntropyLoss_smoothing_weight_ignore": ("nn.CrossEntropyLoss(weight=U(4), "
                                                 "ignore_index=1, label_smoothing=0.2, "
                                                 "reduction={r})", "m(R(6, 4), I(4, 6))"),
    "CrossEntropyLoss_probs": ("nn.CrossEntropyLoss(reduction={r})", "m(R(5, 4), P(5, 4))"),
    "CrossEntropyLoss_probs_weight_smoothing": ("nn.CrossEntropyLoss(weight=U(4), "
                                                "label_smoothing=0.15, reduction={r})",
                                                "m(R(5, 4), P(5, 4))"),
    "CrossEntropyLoss_kdim": ("nn.CrossEntropyLoss(reduction={r}, ignore_index=0)",
                              "m(R(2, 4, 3, 2), I(4, 2, 3, 2))"),
    "CrossEntropyLoss_kdim_probs": ("nn.CrossEntropyLoss(reduction={r})",
                                    "m(R(2, 3, 4), P(2, 4, 3).transpose(1, 2))"),
    "CrossEntropyLoss_unbatched": ("nn.CrossEntropyLoss(reduction={r})", "m(R(5), T(3))"),
    "NLLLoss": ("nn.NLLLoss(reduction={r})", "m(R(5, 4), I(4, 5))"),
    "NLLLoss_weight_ignore": ("nn.NLLLoss(weight=U(4), ignore_index=3, reduction={r})",
                              "m(R(7, 4), I(4, 7))"),
    "NLLLoss_kdim_weight": ("nn.NLLLoss(weight=U(3), reduction={r})",
                            "m(R(2, 3, 4, 2), I(3, 2, 4, 2))"),
    "BCELoss": ("nn.BCELoss(reduction={r})", "m(RU(4, 3), U(4, 3))"),
    "BCELoss_weight": ("nn.BCELoss(weight=U(3), reduction={r})", "m(RU(4, 3), U(4, 3))"),
    "BCEWithLogitsLoss": ("nn.BCEWithLogitsLoss(reduction={r})", "m(R(4, 3), U(4, 3))"),
    "BCEWithLogitsLoss_pos_weight": ("nn.BCEWithLogitsLoss(weight=U(4, 1), pos_weight=U(3) * 3,"
                                     " reduction={r})", "m(R(4, 3), U(4, 3))"),
    "KLDivLoss": ("nn.KLDivLoss(reduction={r})", "m(R(4, 3).log_softmax(-1), P(4, 3))"),
    "KLDivLoss_log_target": ("nn.KLDivLoss(reduction={r}, log_target=True)",
                             "m(R(4, 3).log_softmax(-1), P(4, 3).log())"),
    "PoissonNLLLoss": ("nn.PoissonNLLLoss(reduction={r})", "m(R(4, 3), U(4, 3) * 4)"),
    "PoissonNLLLoss_no_log_full": ("nn.PoissonNLLLoss(log_input=False, full=True, "
                                   "reduction={r})", "m(RA(4, 3), T([[0., 1., 2.], [3., 4., "
                                   "0.5], [1.5, 2., 7.], [1., 1., 0.]]))"),
    "GaussianNLLLoss": ("nn.GaussianNLLLoss(reduction={r})", "m(R(4, 3), N(4, 3), RA(4, 3))"),
    "GaussianNLLLoss_full_var1": ("nn.GaussianNLLLoss(full=True, eps=1e-3, reduction={r})",
                                  "m(R(4, 3), N(4, 3), RA(4, 1))"),
    "MarginRankingLoss": ("nn.MarginRankingLoss(margin=0.2, reduction={r})",
                          "m(R(6), R(6), S(6))"),
    "HingeEmbeddingLoss": ("nn.HingeEmbeddingLoss(margin=1.5, reduction={r})",
                           "m(R(4, 3), S(4, 3))"),
    "CosineEmbeddingLoss": ("nn.CosineEmbeddingLoss(margin=0.1, reduction={r})",
                            "m(R(4, 5), R(4, 5), S(4))"),
    "MultiLabelMarginLoss": ("nn.MultiLabelMarginLoss(reduction={r})",
                             "m(R(3, 4), T([[3, 0, -1, 1], [0, 1, 2, 3], [2, -1, 0, 0]]))"),
    "MultiLabelSoftMarginLoss": ("nn.MultiLabelSoftMarginLoss(weight=U(4), reduction={r})",
                                 "m(R(3, 4), I(2, 3, 4).to(DT))"),
    "MultiMarginLoss": ("nn.MultiMarginLoss(reduction={r})", "m(R(5, 4), I(4, 5))"),
    "MultiMarginLoss_p2_weight": ("nn.MultiMarginLoss(p=2, margin=0.7, weight=U(4), "
                                  "reduction={r})", "m(R(5, 4), I(4, 5))"),
    "SoftMarginLoss": ("nn.SoftMarginLoss(reduction={r})", "m(R(4, 3), S(4, 3))"),
    "TripletMarginLoss": ("nn.TripletMarginLoss(margin=1.0, reduction={r})",
                          "m(R(4, 5), R(4, 5), R(4, 5))"),
    "TripletMarginLoss_p1_swap": ("nn.TripletMarginLoss(margin=0.5, p=1, swap=True, "
                                  "reduction={r})", "m(R(4, 5), R(4, 5), R(4, 5))"),
    "TripletMarginWithDistanceLoss": ("nn.TripletMarginWithDistanceLoss(distance_function="
                                      "nn.PairwiseDistance(), margin=0.5, swap=True, "
                                      "reduction={r})", "m(R(4, 5), R(4, 5), R(4, 5))"),
    "CTCLoss": ("nn.CTCLoss(reduction={r})",
                "m(R(8, 2, 5).log_softmax(2), I(4, 2, 3) + 1, T([8, 6]), T([3, 2]))"),
    "CTCLoss_concat_targets_blank": ("nn.CTCLoss(blank=4, reduction={r})",
                                     "m(R(7, 3, 5).log_softmax(2), I(4, 6), [7, 7, 5], "
                                     "[2, 3, 1])"),
    "CTCLoss_zero_infinity": ("nn.CTCLoss(zero_infinity=True, reduction={r})",
                              "m(R(3, 2, 4).log_softmax(2), T([[1, 1, 1, 2], [2, 3, 0, 0]]), "
                              "[3, 3], [4, 2])"),
    "CTCLoss_unbatched": ("nn.CTCLoss(reduction={r})",
                          "m(R(6, 4).log_softmax(1), T([1, 2, 2]), T(6), T(3))"),
}
LOSSES: dict[str, Case] = {}
for _name, (_ctor, _call) in _LOSSES.items():
    reductions = REDUCTIONS + (("batchmean",) if _name.startswith("KLDiv") else ())
    for _r in reductions:
        LOSSES[f"{_name}[{_r}]"] = (_ctor.format(r=repr(_r)), _call, "train")

# --- nn.functional -----------------------------------------------------------------------------
FUNCTIONS: dict[str, Case] = {}


def _fn(name: str, call: str) -> None:
    FUNCTIONS[name] = (None, call, "train")


# interpolate: every mode x align_corners x size / scale_factor
for _mode, _x in (("nearest", "R(1, 2, 5)"), ("nearest", "R(1, 2, 3, 4)"),
                  ("nearest", "R(1, 1, 2, 3, 3)"), ("nearest-exact", "R(1, 2, 5)"),
                  ("nearest-exact", "R(1, 2, 3, 4)"), ("nearest-exact", "R(1, 1, 2, 3, 3)"),
                  ("linear", "R(1, 2, 5)"), ("bilinear", "R(1, 2, 3, 4)"),
                  ("bicubic", "R(1, 2, 4, 4)"), ("trilinear", "R(1, 1, 2, 3, 3)"),
                  ("area", "R(1, 2, 6)"), ("area", "R(1, 2, 6, 5)"),
                  ("area", "R(1, 1, 4, 4, 6)")):
    _nd = _x.count(",") - 1
    _aligns = (None,) if _mode in ("nearest", "nearest-exact", "area") else (False, True)
    for _align in _aligns:
        _a = "" if _align is None else f", align_corners={_align}"
        _key = f"interpolate_{_mode}_{_nd}d" + ("" if _align is None else f"_align{_align}")
        _size = ", ".join(str(7 - i) for i in range(_nd))
        _fn(f"{_key}_size", f"F.interpolate({_x}, size=({_size},), mode={_mode!r}{_a})")
        _fn(f"{_key}_scale_up", f"F.interpolate({_x}, scale_factor=1.7, mode={_mode!r}{_a})")
        _fn(f"{_key}_scale_down", f"F.interpolate({_x}, scale_factor=0.6, mode={_mode!r}{_a})")
        if _mode != "area":
            _fn(f"{_key}_scale_recompute",
                f"F.interpolate({_x}, scale_factor=1.7, mode={_mode!r}{_a}, "
                "recompute_scale_factor=True)")
for _mode in ("bilinear", "bicubic"):
    for _align in (False, True):
        _fn(f"interpolate_{_mode}_antialias_align{_align}_down",
            f"F.interpolate(R(1, 2, 9, 8), size=(4, 3), mode={_mode!r}, "
            f"align_corners={_align}, antialias=True)")
    _fn(f"interpolate_{_mode}_antialias_up",
        f"F.interpolate(R(1, 2, 3, 4), scale_factor=2, mode={_mode!r}, antialias=True)")

# grid_sample: modes x padding modes x align_corners, 4-D and 5-D; affine_grid
for _mode in ("bilinear", "nearest", "bicubic"):
    for _pad in ("zeros", "border", "reflection"):
        for _align in (False, True):
            _fn(f"grid_sample_2d_{_mode}_{_pad}_align{_align}",
                f"F.grid_sample(R(2, 2, 4, 5), RU(2, 3, 4, 2, lo=-1.3, hi=1.3), mode={_mode!r}, "
                f"padding_mode={_pad!r}, align_corners={_align})")
            if _mode != "bicubic":
                _fn(f"grid_sample_3d_{_mode}_{_pad}_align{_align}",
                    f"F.grid_sample(R(1, 2, 3, 4, 3), RU(1, 2, 3, 2, 3, lo=-1.3, hi=1.3), "
                    f"mode={_mode!r}, padding_mode={_pad!r}, align_corners={_align})")
for _align in (False, True):
    _fn(f"affine_grid_2d_align{_align}",
        f"F.affine_grid(R(2, 2, 3), [2, 3, 4, 5], align_corners={_align})")
    _fn(f"affine_grid_3d_align{_align}",
        f"F.affine_grid(R(2, 3, 4), [2, 1, 3, 2, 4], align_corners={_align})")
    _fn(f"affine_grid_grid_sample_align{_align}",
        f"F.grid_sample(R(1, 2, 5, 5), F.affine_grid(R(1, 2, 3), [1, 2, 4, 6], "
        f"align_corners={_align}), align_corners={_align})")

# pad: every mode, 1-D / 2-D / 3-D
for _mode in ("constant", "reflect", "replicate", "circular"):
    _fn(f"pad_{_mode}_1d", f"F.pad(R(2, 3, 5), (2, 1), mode={_mode!r})")
    _fn(f"pad_{_mode}_2d", f"F.pad(R(1, 2, 4, 5), (1, 2, 3, 0), mode={_mode!r})")
    _fn(f"pad_{_mode}_3d", f"F.pad(R(1, 2, 3, 4, 3), (1, 1, 0, 2, 2, 1), mode={_mode!r})")
    if _mode != "constant":
        _fn(f"pad_{_mode}_2d_unbatched", f"F.pad(R(2, 4, 5), (1, 1, 2, 2), mode={_mode!r})")
_fn("pad_constant_value_negative", "F.pad(R(2, 3, 5), (-1, 2, 1, 0), value=2.5)")
_fn("pad_constant_last_dims_only", "F.pad(R(3, 4), (1, 1))")
_fn("pad_constant_4_dims", "F.pad(R(2, 2, 2, 2), (1, 0, 0, 1, 1, 0, 0, 2))")

_fn("unfold", "F.unfold(R(2, 3, 5, 4), (2, 3))")
_fn("unfold_all_options", "F.unfold(R(1, 2, 6, 7), 3, dilation=(2, 1), padding=1, stride=2)")
_fn("fold", "F.fold(R(2, 12, 12), (4, 5), 2)")
_fn("fold_all_options", "F.fold(R(1, 8, 6), (5, 4), (2, 2), dilation=2, padding=(1, 0), "
    "stride=(2, 1))")
_fn("fold_unbatched", "F.fold(R(12, 12), (4, 5), 2)")
_fn("one_hot", "F.one_hot(I(5, 3, 4))")
_fn("one_hot_num_classes", "F.one_hot(I(3, 6), num_classes=5)")
_fn("normalize", "F.normalize(R(4, 5))")
_fn("normalize_p1_dim0", "F.normalize(R(4, 5), p=1.0, dim=0, eps=1e-3)")
_fn("normalize_pinf", "F.normalize(R(3, 4, 2), p=float('inf'), dim=1)")
_fn("embedding", "F.embedding(I(6, 3, 4), R(6, 3))")
_fn("embedding_padding_idx", "F.embedding(I(6, 3, 4), R(6, 3), padding_idx=2)")
_fn("embedding_max_norm", "F.embedding(I(6, 3, 4), R(6, 3).clone(), max_norm=0.8)")
_fn("embedding_bag_max", "F.embedding_bag(I(8, 7), R(8, 3), T([0, 2, 5]), mode='max')")
_fn("embedding_bag_sum_psw", "F.embedding_bag(I(8, 2, 4), R(8, 3), mode='sum', "
    "per_sample_weights=R(2, 4))")

# scaled_dot_product_attention
_Q, _K, _V = "R(2, 3, 4, 5)", "R(2, 3, 6, 5)", "R(2, 3, 6, 7)"
_fn("sdpa", f"F.scaled_dot_product_attention({_Q}, {_K}, {_V})")
_fn("sdpa_bool_mask", f"F.scaled_dot_product_attention({_Q}, {_K}, {_V}, attn_mask=B(4, 6))")
_fn("sdpa_bool_mask_broadcast", f"F.scaled_dot_product_attention({_Q}, {_K}, {_V}, "
    "attn_mask=T([[[[True] * 5 + [False]]], [[[False, True] + [True] * 4]]]))")
_fn("sdpa_float_mask", f"F.scaled_dot_product_attention({_Q}, {_K}, {_V}, attn_mask=N(3, 4, 6))")
_fn("sdpa_float_mask_grad", f"F.scaled_dot_product_attention({_Q}, {_K}, {_V}, "
    "attn_mask=R(2, 1, 4, 6))")
_fn("sdpa_causal", "F.scaled_dot_product_attention(R(2, 2, 5, 4), R(2, 2, 5, 4), "
    "R(2, 2, 5, 4), is_causal=True)")
_fn("sdpa_causal_rect", f"F.scaled_dot_product_attention({_Q}, {_K}, {_V}, is_causal=True)")
_fn("sdpa_scale", f"F.scaled_dot_product_attention({_Q}, {_K}, {_V}, scale=0.3)")
_fn("sdpa_3d", "F.scaled_dot_product_attention(R(3, 4, 5), R(3, 6, 5), R(3, 6, 2))")
_fn("sdpa_gqa", "F.scaled_dot_product_attention(R(2, 4, 3, 5), R(2, 2, 6, 5), R(2, 2, 6, 5), "
    "enable_gqa=True)")
_fn("sdpa_gqa_causal_scale", "F.scaled_dot_product_attention(R(1, 6, 4, 3), R(1, 2, 4, 3), "
    "R(1, 2, 4, 3), is_causal=True, scale=0.7, enable_gqa=True)")
_fn("sdpa_dropout_p0", f"F.scaled_dot_product_attention({_Q}, {_K}, {_V}, dropout_p=0.0)")

# distances and the rest
_fn("cosine_similarity", "F.cosine_similarity(R(4, 5), R(4, 5))")
_fn("cosine_similarity_broadcast_eps", "F.cosine_similarity(R(2, 1, 5), R(3, 5), dim=-1, "
    "eps=0.5)")
_fn("pairwise_distance", "F.pairwise_distance(R(4, 5), R(4, 5))")
_fn("pairwise_distance_p3_keepdim", "F.pairwise_distance(R(4, 5), R(4, 5), p=3.0, "
    "keepdim=True)")
_fn("pdist", "F.pdist(R(5, 3))")
_fn("pdist_p1", "F.pdist(R(4, 3), p=1.0)")
_fn("pdist_p3", "F.pdist(R(4, 3), p=3.0)")
_fn("pdist_pinf", "F.pdist(R(4, 3), p=float('inf'))")
_fn("glu", "F.glu(R(3, 4))")
_fn("glu_dim0", "F.glu(R(4, 3), dim=0)")
_fn("softmin", "F.softmin(R(3, 4), dim=1)")
_fn("softmin_dtype", "F.softmin(R(3, 4), dim=0, dtype=DT)")
_fn("softmax_dtype", "F.softmax(R(3, 4), dim=-1, dtype=DT)")
_fn("log_softmax", "F.log_softmax(R(3, 4), dim=0)")
_fn("dropout_p0", "F.dropout(R(3, 4), p=0.0)")
_fn("dropout_eval", "F.dropout(R(3, 4), p=0.5, training=False)")
_fn("dropout1d_eval", "F.dropout1d(R(2, 3, 4), p=0.5, training=False)")
_fn("dropout2d_eval", "F.dropout2d(R(2, 3, 4, 4), p=0.5, training=False)")
_fn("dropout3d_eval", "F.dropout3d(R(2, 3, 2, 2, 2), p=0.5, training=False)")
_fn("alpha_dropout_eval", "F.alpha_dropout(R(3, 4), p=0.5, training=False)")
_fn("feature_alpha_dropout_eval", "F.feature_alpha_dropout(R(2, 3, 4), p=0.5, training=False)")
_fn("rrelu_eval", "F.rrelu(R(3, 4), 0.2, 0.4, training=False)")
for _act, _args in (("relu", ""), ("relu6", ""), ("leaky_relu", ", 0.3"), ("elu", ", 0.7"),
                    ("selu", ""), ("celu", ", alpha=2.0"), ("gelu", ""),
                    ("gelu", ", approximate='tanh'"), ("silu", ""), ("mish", ""),
                    ("hardsigmoid", ""), ("hardtanh", ", -0.3, 0.6"), ("hardswish", ""),
                    ("softplus", ", beta=3.0, threshold=2.0"), ("softsign", ""),
                    ("tanhshrink", ""), ("softshrink", ", 0.4"), ("hardshrink", ", 0.2"),
                    ("threshold", ", 0.2, 1.5"), ("logsigmoid", ""), ("sigmoid", ""),
                    ("tanh", "")):
    _fn(f"{_act}{'_tanh' if 'tanh' in _args else ''}", f"F.{_act}(R(4, 5) * 2{_args})")
_fn("prelu", "F.prelu(R(2, 3, 4), R(3))")
_fn("linear", "F.linear(R(3, 4), R(5, 4), R(5))")
_fn("bilinear", "F.bilinear(R(3, 4), R(3, 2), R(5, 4, 2), R(5))")
_fn("conv1d", "F.conv1d(R(2, 4, 7), R(6, 2, 3), R(6), stride=2, padding=1, groups=2)")
_fn("conv2d_same", "F.conv2d(R(1, 2, 5, 6), R(3, 2, 2, 3), padding='same', dilation=2)")
_fn("conv3d", "F.conv3d(R(1, 2, 4, 4, 3), R(2, 2, 2, 2, 2), stride=(1, 2, 1))")
_fn("conv_transpose1d", "F.conv_transpose1d(R(1, 2, 5), R(2, 3, 3), stride=3, padding=1, "
    "output_padding=2)")
_fn("conv_transpose2d", "F.conv_transpose2d(R(1, 4, 3, 3), R(4, 1, 3, 3), R(2), stride=2, "
    "groups=2, dilation=2)")
_fn("conv_transpose3d", "F.conv_transpose3d(R(1, 2, 2, 2, 2), R(2, 2, 2, 3, 2), stride=2)")
_fn("max_pool2d_indices", "F.max_pool2d(R(1, 2, 6, 5), 3, 2, 1, return_indices=True, "
    "ceil_mode=True)")
_fn("avg_pool1d", "F.avg_pool1d(R(2, 3, 7), 3, 2, 1, ceil_mode=True, count_include_pad=False)")
_fn("lp_pool1d", "F.lp_pool1d(RA(2, 3, 7), 3.0, 2)")
_fn("adaptive_max_pool1d", "F.adaptive_max_pool1d(R(2, 3, 8), 3, return_indices=True)")
_fn("adaptive_avg_pool3d", "F.adaptive_avg_pool3d(R(1, 1, 5, 4, 3), (2, 3, 2))")
_fn("max_unpool2d", "F.max_unpool2d(*F.max_pool2d(R(1, 1, 4, 4), 2, return_indices=True), 2)")
_fn("pixel_shuffle", "F.pixel_shuffle(R(1, 9, 2, 2), 3)")
_fn("pixel_unshuffle", "F.pixel_unshuffle(R(1, 1, 4, 6), 2)")
_fn("channel_shuffle", "F.channel_shuffle(R(1, 6, 2, 2), 2)")
_fn("batch_norm_train", "F.batch_norm(R(4, 3, 2), N(3), U(3), R(3), R(3), training=True, "
    "momentum=0.2)")
_fn("batch_norm_eval", "F.batch_norm(R(4, 3), N(3), U(3), R(3), R(3))")
_fn("layer_norm", "F.layer_norm(R(3, 4, 5), (4, 5), R(4, 5), R(4, 5))")
_fn("group_norm", "F.group_norm(R(2, 6, 3), 3, R(6), R(6))")
_fn("rms_norm", "F.rms_norm(R(3, 5), (5,), R(5), eps=1e-3)")
_fn("instance_norm", "F.instance_norm(R(2, 3, 5), weight=R(3), bias=R(3))")
_fn("instance_norm_stats", "F.instance_norm(R(2, 3, 5), N(3), U(3), use_input_stats=True, "
    "momentum=0.3)")
_fn("local_response_norm", "F.local_response_norm(R(2, 4, 3, 3), 2)")
_fn("cross_entropy_probs_fn", "F.cross_entropy(R(3, 4), P(3, 4), label_smoothing=0.3)")
_fn("nll_loss_fn", "F.nll_loss(R(3, 4), I(4, 3), reduction='sum')")
_fn("binary_cross_entropy_with_logits_fn", "F.binary_cross_entropy_with_logits(R(3, 4), "
    "U(3, 4), pos_weight=U(4))")
_fn("kl_div_fn", "F.kl_div(R(3, 4), P(3, 4), reduction='batchmean')")
_fn("ctc_loss_fn", "F.ctc_loss(R(6, 2, 4).log_softmax(2), I(3, 2, 3) + 1, [6, 5], [3, 2])")

# --- edge cases: empty batches, non-contiguous inputs, gradients through targets -------------
MODULES.update({
    "empty_batch_Linear": ("nn.Linear(5, 3)", "m(R(0, 5))", "train"),
    "empty_batch_Conv2d": ("nn.Conv2d(2, 3, 3, padding=1)", "m(R(0, 2, 4, 4))", "train"),
    "empty_batch_ConvTranspose1d": ("nn.ConvTranspose1d(2, 3, 3)", "m(R(0, 2, 4))", "train"),
    "empty_batch_MaxPool2d": ("nn.MaxPool2d(2)", "m(R(0, 2, 4, 4))", "train"),
    "empty_batch_AvgPool1d": ("nn.AvgPool1d(2)", "m(R(0, 2, 4))", "train"),
    "empty_batch_AdaptiveAvgPool2d": ("nn.AdaptiveAvgPool2d(2)", "m(R(0, 2, 5, 5))", "train"),
    "empty_batch_BatchNorm1d_eval": ("nn.BatchNorm1d(3)", "m(R(0, 3))", "eval"),
    "empty_batch_LayerNorm": ("nn.LayerNorm(4)", "m(R(0, 4))", "train"),
    "empty_batch_GroupNorm": ("nn.GroupNorm(2, 4)", "m(R(0, 4, 3))", "train"),
    "empty_batch_Embedding": ("nn.Embedding(5, 3)", "m(I(5, 0, 4))", "train"),
    "empty_batch_LSTM": ("nn.LSTM(3, 4, batch_first=True)", "m(R(0, 5, 3))", "train"),
    "empty_batch_MHA": ("nn.MultiheadAttention(4, 2, batch_first=True)",
                        "m(R(0, 3, 4), R(0, 3, 4), R(0, 3, 4))", "train"),
    "empty_seq_TransformerEncoderLayer": ("nn.TransformerEncoderLayer(4, 2, 8, 0.0)",
                                          "m(R(0, 2, 4))", "train"),
    "empty_features_Flatten": ("nn.Flatten()", "m(R(3, 0, 2))", "train"),
    "noncontig_Linear": ("nn.Linear(4, 3)", "m(R(4, 5).t())", "train"),
    "noncontig_Conv2d": ("nn.Conv2d(2, 3, 3, padding=1)", "m(R(1, 2, 5, 6).transpose(2, 3))",
                         "train"),
    "noncontig_Conv1d_channels_last": ("nn.Conv1d(3, 2, 2)", "m(R(2, 6, 3).transpose(1, 2))",
                                       "train"),
    "noncontig_MaxPool2d": ("nn.MaxPool2d(2, return_indices=True)",
                            "m(R(1, 5, 4, 2).permute(0, 3, 2, 1))", "train"),
    "noncontig_AvgPool2d_strided": ("nn.AvgPool2d(2)", "m(R(1, 2, 8, 8)[:, :, ::2, 1::2])",
                                    "train"),
    "noncontig_BatchNorm2d": ("nn.BatchNorm2d(3)", "m(R(2, 4, 4, 3).permute(0, 3, 1, 2))",
                              "train"),
    "noncontig_LayerNorm": ("nn.LayerNorm(3)", "m(R(3, 4).t())", "train"),
    "noncontig_LSTM": ("nn.LSTM(3, 4)", "m(R(2, 5, 3).transpose(0, 1))", "train"),
    "noncontig_GRU_h0": ("nn.GRU(3, 4)", "m(R(5, 2, 3), R(2, 1, 4).transpose(0, 1))", "train"),
    "noncontig_MHA": ("nn.MultiheadAttention(4, 2)",
                      "m(R(2, 3, 4).transpose(0, 1), R(2, 3, 4).transpose(0, 1), "
                      "R(2, 3, 4).transpose(0, 1))", "train"),
    "noncontig_Embedding_idx": ("nn.Embedding(6, 3)", "m(I(6, 4, 3).t())", "train"),
    "noncontig_EmbeddingBag_idx": ("nn.EmbeddingBag(6, 3, mode='max')", "m(I(6, 4, 3).t())",
                                   "train"),
    "noncontig_ReflectionPad2d": ("nn.ReflectionPad2d(1)", "m(R(1, 3, 4, 2).transpose(1, 3))",
                                  "train"),
    "noncontig_PixelShuffle": ("nn.PixelShuffle(2)", "m(R(1, 3, 3, 4).transpose(1, 3))",
                               "train"),
    "noncontig_Unfold": ("nn.Unfold(2)", "m(R(1, 4, 4, 2).transpose(1, 3))", "train"),
    "double_call_BatchNorm1d": ("nn.BatchNorm1d(3, momentum=None)",
                                "(m(R(4, 3)), m(R(5, 3)))", "train"),
    "double_call_InstanceNorm1d": ("nn.InstanceNorm1d(2, track_running_stats=True)",
                                   "(m(R(2, 2, 4)), m(R(3, 2, 4)))", "train"),
    "shared_weights_Sequential": ("nn.Sequential(nn.Linear(3, 3), nn.Tanh())",
                                  "m(m(R(2, 3)))", "train"),
})

_TARGET_GRAD_LOSSES: dict[str, tuple[str, str]] = {
    "target_grad_MSELoss": ("nn.MSELoss()", "m(R(4, 3), R(4, 3))"),
    "target_grad_L1Loss": ("nn.L1Loss(reduction='sum')", "m(R(4, 3), R(4, 3))"),
    "target_grad_SmoothL1Loss": ("nn.SmoothL1Loss(beta=0.8)", "m(R(4, 3), R(4, 3))"),
    "target_grad_HuberLoss": ("nn.HuberLoss(reduction='none')", "m(R(4, 3), R(4, 3))"),
    "target_grad_KLDivLoss": ("nn.KLDivLoss(reduction='batchmean')",
                              "m(R(4, 3).log_softmax(-1), R(4, 3).softmax(-1))"),
    "target_grad_KLDivLoss_log_target": ("nn.KLDivLoss(reduction='sum', log_target=True)",
                                         "m(R(4, 3).log_softmax(-1), R(4, 3).log_softmax(-1))"),
    "target_grad_BCEWithLogitsLoss": ("nn.BCEWithLogitsLoss(pos_weight=U(3))",
                                      "m(R(4, 3), RU(4, 3))"),
    "target_grad_BCELoss": ("nn.BCELoss()", "m(RU(4, 3), RU(4, 3))"),
    "target_grad_CrossEntropyLoss_probs": ("nn.CrossEntropyLoss(label_smoothing=0.1)",
                                           "m(R(4, 3), R(4, 3).softmax(-1))"),
    "target_grad_GaussianNLLLoss": ("nn.GaussianNLLLoss()", "m(R(4, 3), R(4, 3), RA(4, 3))"),
    "target_grad_PoissonNLLLoss": ("nn.PoissonNLLLoss()", "m(R(4, 3), RA(4, 3))"),
    "target_grad_MultiLabelSoftMarginLoss": ("nn.MultiLabelSoftMarginLoss()",
                                             "m(R(4, 3), RU(4, 3))"),
    "target_grad_CosineEmbeddingLoss": ("nn.CosineEmbeddingLoss()",
                                        "m(R(4, 3), R(4, 3), S(4))"),
    "empty_batch_CrossEntropyLoss_mean": ("nn.CrossEntropyLoss()", "m(R(0, 3), I(3, 0))"),
    "empty_batch_MSELoss_mean": ("nn.MSELoss()", "m(R(0, 3), N(0, 3))"),
    "all_ignored_NLLLoss_mean": ("nn.NLLLoss(ignore_index=1)", "m(R(3, 4), T([1, 1, 1]))"),
    "all_ignored_CrossEntropyLoss_smoothing": ("nn.CrossEntropyLoss(ignore_index=0, "
                                               "label_smoothing=0.2)",
                                               "m(R(2, 3), T([0, 0]))"),
    "CTCLoss_impossible_no_zero_infinity": ("nn.CTCLoss(reduction='sum')",
                                            "m(R(2, 1, 3).log_softmax(2), T([[1, 1, 2]]), "
                                            "[2], [3])"),
    "CTCLoss_repeated_labels": ("nn.CTCLoss()",
                                "m(R(9, 2, 3).log_softmax(2), T([[1, 1, 2, 2], [2, 2, 2, 1]]),"
                                " [9, 8], [4, 4])"),
}
for _name, (_ctor, _call) in _TARGET_GRAD_LOSSES.items():
    LOSSES[_name] = (_ctor, _call, "train")

# --- errors: both libraries must refuse these ---------------------------------------------------
ERRORS: dict[str, Case] = {
    "Linear_wrong_features": ("nn.Linear(4, 3)", "m(R(2, 5))", "train"),
    "Conv2d_wrong_channels": ("nn.Conv2d(3, 2, 3)", "m(R(1, 2, 5, 5))", "train"),
    "Conv2d_kernel_too_big": ("nn.Conv2d(1, 1, 4)", "m(R(1, 1, 3, 3))", "train"),
    "Conv2d_bad_padding_string": ("nn.Conv2d(1, 1, 3, padding='full')", "m(R(1, 1, 3, 3))",
                                  "train"),
    "Conv2d_same_with_stride": ("nn.Conv2d(1, 1, 3, padding='same', stride=2)",
                                "m(R(1, 1, 5, 5))", "train"),
    "Conv2d_groups_not_dividing": ("nn.Conv2d(4, 6, 3, groups=4)", "m(R(1, 4, 5, 5))",
                                   "train"),
    "Conv1d_bad_padding_mode": ("nn.Conv1d(1, 1, 3, padding_mode='mirror')", "m(R(1, 1, 5))",
                                "train"),
    "ConvTranspose2d_output_padding_too_big": ("nn.ConvTranspose2d(1, 1, 3, stride=2, "
                                               "output_padding=2)", "m(R(1, 1, 3, 3))",
                                               "train"),
    "MaxPool2d_padding_too_big": ("nn.MaxPool2d(2, padding=2)", "m(R(1, 1, 5, 5))", "train"),
    "MaxPool1d_output_empty": ("nn.MaxPool1d(4)", "m(R(1, 1, 3))", "train"),
    "BatchNorm1d_wrong_features": ("nn.BatchNorm1d(3)", "m(R(4, 5))", "train"),
    "BatchNorm1d_one_value_train": ("nn.BatchNorm1d(3)", "m(R(1, 3))", "train"),
    "BatchNorm2d_3d_input": ("nn.BatchNorm2d(3)", "m(R(2, 3, 4))", "train"),
    "GroupNorm_not_dividing": ("nn.GroupNorm(3, 4)", "m(R(2, 4, 3))", "train"),
    "LayerNorm_wrong_shape": ("nn.LayerNorm(4)", "m(R(2, 5))", "train"),
    "InstanceNorm1d_one_value": ("nn.InstanceNorm1d(2)", "m(R(2, 2, 1))", "train"),
    "Embedding_index_out_of_range": ("nn.Embedding(4, 3)", "m(T([1, 4]))", "train"),
    "Embedding_float_index": ("nn.Embedding(4, 3)", "m(N(2))", "train"),
    "Embedding_padding_idx_out_of_range": ("nn.Embedding(4, 3, padding_idx=4)", "m(T([1]))",
                                           "train"),
    "EmbeddingBag_psw_with_mean": ("nn.EmbeddingBag(5, 3, mode='mean')",
                                   "m(I(5, 4), T([0, 2]), per_sample_weights=N(4))", "train"),
    "EmbeddingBag_offsets_with_2d": ("nn.EmbeddingBag(5, 3)", "m(I(5, 2, 3), T([0, 1]))",
                                     "train"),
    "LSTM_wrong_input_size": ("nn.LSTM(3, 4)", "m(R(5, 2, 4))", "train"),
    "LSTM_wrong_hidden_shape": ("nn.LSTM(3, 4)", "m(R(5, 2, 3), (R(1, 3, 4), R(1, 3, 4)))",
                                "train"),
    "GRU_4d_input": ("nn.GRU(3, 4)", "m(R(5, 2, 1, 3))", "train"),
    "RNN_bad_nonlinearity": ("nn.RNN(3, 4, nonlinearity='gelu')", "m(R(5, 2, 3))", "train"),
    "LSTM_proj_too_big": ("nn.LSTM(3, 4, proj_size=4)", "m(R(5, 2, 3))", "train"),
    "pack_padded_unsorted_enforced": ("nn.LSTM(3, 4)", "m(nn.utils.rnn.pack_padded_sequence("
                                      "R(5, 3, 3), [2, 5, 3]))", "train"),
    "MHA_embed_dim_not_divisible": ("nn.MultiheadAttention(5, 2)",
                                    "m(R(2, 1, 5), R(2, 1, 5), R(2, 1, 5))", "train"),
    "MHA_wrong_mask_shape": ("nn.MultiheadAttention(4, 2)",
                             "m(R(3, 2, 4), R(3, 2, 4), R(3, 2, 4), attn_mask=B(2, 2))",
                             "train"),
    "Transformer_bad_activation": ("nn.TransformerEncoderLayer(4, 2, activation='swish')",
                                   "m(R(3, 2, 4))", "train"),
    "PixelShuffle_not_divisible": ("nn.PixelShuffle(2)", "m(R(1, 6, 2, 2))", "train"),
    "Unflatten_wrong_sizes": ("nn.Unflatten(1, (2, 4))", "m(R(3, 6))", "train"),
    "Fold_wrong_blocks": ("nn.Fold((4, 5), 2)", "m(R(1, 4, 11))", "train"),
    "ReflectionPad1d_too_big": ("nn.ReflectionPad1d(4)", "m(R(1, 2, 4))", "train"),
    "Softmax2d_2d_input": ("nn.Softmax2d()", "m(R(3, 4))", "train"),
    "GLU_odd": ("nn.GLU()", "m(R(3, 5))", "train"),
    "PReLU_wrong_channels": ("nn.PReLU(3)", "m(R(2, 4, 2))", "train"),
    "CrossEntropyLoss_target_out_of_range": ("nn.CrossEntropyLoss()", "m(R(3, 4), T([0, 4, 1]))",
                                             "train"),
    "CrossEntropyLoss_bad_smoothing": ("nn.CrossEntropyLoss(label_smoothing=1.5)",
                                       "m(R(3, 4), I(4, 3))", "train"),
    "NLLLoss_target_shape": ("nn.NLLLoss()", "m(R(3, 4), I(4, 2))", "train"),
    "MSELoss_bad_reduction": ("nn.MSELoss(reduction='average')", "m(R(3), N(3))", "train"),
    "BCELoss_input_out_of_range": ("nn.BCELoss()", "m(R(3) + 2, U(3))", "train"),
    "KLDivLoss_shape_mismatch": ("nn.KLDivLoss()", "m(R(3, 4), P(3, 5))", "train"),
    "CTCLoss_target_too_long": ("nn.CTCLoss()", "m(R(3, 1, 4).log_softmax(2), T([[1, 2, 3, 1]]),"
                                " [3], [5])", "train"),
    "GaussianNLLLoss_negative_var": ("nn.GaussianNLLLoss()", "m(R(3), N(3), -RA(3))",
                                     "train"),
    "MultiMarginLoss_bad_p": ("nn.MultiMarginLoss(p=3)", "m(R(3, 4), I(4, 3))", "train"),
}
_ERROR_FUNCTIONS: dict[str, str] = {
    "pad_reflect_too_big": "F.pad(R(1, 2, 3), (3, 0), mode='reflect')",
    "pad_odd_length": "F.pad(R(1, 2, 3), (1, 2, 3))",
    "pad_bad_mode": "F.pad(R(1, 2, 3), (1, 1), mode='mirror')",
    "pad_circular_too_big": "F.pad(R(1, 2, 3), (4, 0), mode='circular')",
    "interpolate_size_and_scale": "F.interpolate(R(1, 1, 4), size=3, scale_factor=2.0)",
    "interpolate_align_with_nearest": "F.interpolate(R(1, 1, 4), size=3, align_corners=True)",
    "interpolate_bilinear_3d_input": "F.interpolate(R(1, 1, 4), size=3, mode='bilinear')",
    "grid_sample_bad_mode": "F.grid_sample(R(1, 1, 3, 3), N(1, 2, 2, 2), mode='area', "
                            "align_corners=False)",
    "grid_sample_bicubic_5d": "F.grid_sample(R(1, 1, 2, 3, 3), N(1, 2, 2, 2, 3), "
                              "mode='bicubic', align_corners=False)",
    "affine_grid_bad_theta": "F.affine_grid(R(2, 3, 3), [2, 1, 4, 4], align_corners=False)",
    "one_hot_negative": "F.one_hot(T([1, -1]))",
    "one_hot_too_small": "F.one_hot(T([1, 3]), num_classes=3)",
    "one_hot_float": "F.one_hot(N(3))",
    "sdpa_bad_mask_shape": "F.scaled_dot_product_attention(R(1, 2, 3, 4), R(1, 2, 5, 4), "
                           "R(1, 2, 5, 4), attn_mask=B(3, 4))",
    "sdpa_causal_with_mask": "F.scaled_dot_product_attention(R(1, 2, 3, 4), R(1, 2, 3, 4), "
                             "R(1, 2, 3, 4), attn_mask=B(3, 3), is_causal=True)",
    "sdpa_gqa_not_divisible": "F.scaled_dot_product_attention(R(1, 3, 3, 4), R(1, 2, 3, 4), "
                              "R(1, 2, 3, 4), enable_gqa=True)",
    "sdpa_gqa_disabled": "F.scaled_dot_product_attention(R(1, 4, 3, 4), R(1, 2, 3, 4), "
                         "R(1, 2, 3, 4))",
    "unfold_3d_input": "F.unfold(R(2, 3, 4), 2)",
    "fold_bad_channels": "F.fold(R(1, 5, 12), (4, 5), 2)",
    "pdist_3d": "F.pdist(R(2, 3, 4))",
    "pdist_negative_p": "F.pdist(R(3, 4), p=-1.0)",
    "normalize_int": "F.normalize(I(3, 3, 4))",
    "embedding_bag_bad_mode": "F.embedding_bag(I(5, 2, 3), R(5, 3), mode='median')",
    "cosine_similarity_bad_broadcast": "F.cosine_similarity(R(3, 4), R(2, 4))",
    "glu_0d": "F.glu(R())",
    "dropout_bad_p": "F.dropout(R(3), p=1.5)",
    "cross_entropy_probs_shape": "F.cross_entropy(R(3, 4), P(3, 5))",
    "binary_cross_entropy_shape": "F.binary_cross_entropy(RU(3, 4), U(4, 3))",
}
for _name, _call in _ERROR_FUNCTIONS.items():
    ERRORS[_name] = (None, _call, "train")

# --- in-place activations, legacy arguments, factory kwargs, NaN/inf propagation -----------
for _ctor in ("nn.ReLU(inplace=True)", "nn.ReLU6(inplace=True)", "nn.LeakyReLU(0.1, True)",
              "nn.ELU(0.5, inplace=True)", "nn.SELU(inplace=True)", "nn.CELU(0.7, True)",
              "nn.SiLU(inplace=True)", "nn.Mish(inplace=True)", "nn.Hardswish(inplace=True)",
              "nn.Hardsigmoid(inplace=True)", "nn.Hardtanh(-0.4, 0.6, inplace=True)",
              "nn.Threshold(0.2, -1.0, inplace=True)", "nn.RReLU(inplace=True)",
              "nn.Dropout(0.0, inplace=True)", "nn.AlphaDropout(0.0, inplace=True)"):
    _key = "inplace_" + _ctor.split("(")[0][3:]
    MODULES[_key] = (_ctor, "(lambda x: (m(x), x))(R(4, 5) * 2)",
                     "eval" if "RReLU" in _ctor else "train")
for _act in ("relu_", "elu_", "leaky_relu_", "hardtanh_", "rrelu_", "threshold_", "celu_",
             "selu_"):
    _extra = {"threshold_": ", 0.1, 2.0", "rrelu_": ", training=False"}.get(_act, "")
    _fn(f"inplace_F.{_act}", f"(lambda x: (F.{_act}(x{_extra}), x))(R(4, 5) * 2)")
for _act in ("relu", "elu", "leaky_relu", "hardtanh", "relu6", "selu", "celu", "silu",
             "hardswish", "hardsigmoid", "mish", "dropout"):
    _fn(f"inplace_F.{_act}(inplace=True)",
        f"(lambda x: (F.{_act}(x, {'p=0.0, ' if _act == 'dropout' else ''}inplace=True), x))"
        "(R(4, 5) * 2)")

MODULES.update({
    "factory_kwargs_Linear": ("nn.Linear(3, 2, dtype=torch.float64, device='cpu')",
                              "m(R(4, 3))", "train"),
    "factory_kwargs_Conv1d": ("nn.Conv1d(2, 2, 2, dtype=torch.float64)", "m(R(1, 2, 4))",
                              "train"),
    "factory_kwargs_BatchNorm1d": ("nn.BatchNorm1d(3, dtype=torch.float64)", "m(R(4, 3))",
                                   "train"),
    "factory_kwargs_LSTM": ("nn.LSTM(2, 3, dtype=torch.float64)", "m(R(3, 1, 2))", "train"),
    "factory_kwargs_MHA": ("nn.MultiheadAttention(4, 2, dtype=torch.float64)",
                           "m(R(2, 1, 4), R(2, 1, 4), R(2, 1, 4))", "train"),
    "BatchNorm1d_momentum0": ("nn.BatchNorm1d(3, momentum=0.0)", "m(R(4, 3))", "train"),
    "BatchNorm1d_momentum1": ("nn.BatchNorm1d(3, momentum=1.0)", "m(R(4, 3))", "train"),
    "AdaptiveAvgPool2d_upsample": ("nn.AdaptiveAvgPool2d((5, 7))", "m(R(1, 2, 3, 4))",
                                   "train"),
    "AdaptiveMaxPool2d_upsample": ("nn.AdaptiveMaxPool2d((5, 3), return_indices=True)",
                                   "m(R(1, 2, 3, 2))", "train"),
    "AdaptiveAvgPool1d_identity": ("nn.AdaptiveAvgPool1d(5)", "m(R(2, 5))", "train"),
    "nan_MaxPool2d": ("nn.MaxPool2d(2, return_indices=True)",
                      "m(torch.where(B(1, 2, 4, 4), float('nan'), R(1, 2, 4, 4)))", "train"),
    "nan_MaxPool1d": ("nn.MaxPool1d(3, 1, 1)",
                      "m(torch.where(B(2, 6), float('nan'), R(2, 6)))", "train"),
    "nan_AdaptiveMaxPool1d": ("nn.AdaptiveMaxPool1d(2)",
                              "m(torch.where(B(2, 7), float('nan'), R(2, 7)))", "train"),
    "inf_MaxPool2d": ("nn.MaxPool2d(2)",
                      "m(torch.where(B(1, 1, 4, 4), -float('inf'), R(1, 1, 4, 4)))", "train"),
    "nan_ReLU": ("nn.ReLU()", "m(torch.where(B(4, 5), float('nan'), R(4, 5)))", "train"),
    "nan_Hardtanh": ("nn.Hardtanh()", "m(torch.where(B(4, 5), float('nan'), R(4, 5)))",
                     "train"),
    "nan_Threshold": ("nn.Threshold(0.0, 5.0)",
                      "m(torch.where(B(4, 5), float('nan'), R(4, 5)))", "train"),
    "nan_ReLU6": ("nn.ReLU6()", "m(torch.where(B(4, 5), float('nan'), R(4, 5) * 4))", "train"),
    "nan_Hardshrink": ("nn.Hardshrink()", "m(torch.where(B(4, 5), float('nan'), R(4, 5)))",
                       "train"),
    "nan_Softshrink": ("nn.Softshrink()", "m(torch.where(B(4, 5), float('nan'), R(4, 5)))",
                       "train"),
    "nan_LeakyReLU": ("nn.LeakyReLU()", "m(torch.where(B(4, 5), float('nan'), R(4, 5)))",
                      "train"),
    "inf_Softmax_row": ("nn.Softmax(-1)", "m(torch.where(T([[True] * 4, [False] * 4, "
                        "[True, False, True, False]]), -float('inf'), R(3, 4)))", "train"),
    "inf_LogSoftmax": ("nn.LogSoftmax(-1)", "m(torch.where(T([[False, True, False]]), "
                       "-float('inf'), R(2, 3)))", "train"),
    "inf_Softplus": ("nn.Softplus()", "m(torch.where(B(3, 4), float('inf'), R(3, 4)))",
                     "train"),
    "inf_Sigmoid_Tanh": ("nn.Sequential(nn.Sigmoid(), nn.Tanh())",
                         "m(torch.where(B(3, 4), -float('inf'), R(3, 4)))", "train"),
    "huge_GELU_SiLU_Mish": ("nn.Sequential(nn.GELU(), nn.SiLU(), nn.Mish())",
                            "m(R(3, 4) * 300)", "train"),
    "huge_LogSigmoid": ("nn.LogSigmoid()", "m(R(3, 4) * 800)", "train"),
    "MHA_all_masked_row": ("nn.MultiheadAttention(4, 2, batch_first=True)",
                           "m(R(2, 3, 4), R(2, 3, 4), R(2, 3, 4), "
                           "key_padding_mask=T([[True] * 3, [False, True, False]]))", "train"),
    "Transformer_src_is_causal": ("nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, "
                                  "0.0), 1, enable_nested_tensor=False)",
                                  "m(R(3, 2, 4), mask=nn.Transformer."
                                  "generate_square_subsequent_mask(3, dtype=DT), "
                                  "is_causal=True)", "train"),
})
for _name, _ctor in (("legacy_MSELoss_size_average_False", "nn.MSELoss(size_average=False)"),
                     ("legacy_L1Loss_reduce_False", "nn.L1Loss(reduce=False)"),
                     ("legacy_SmoothL1Loss_both_False", "nn.SmoothL1Loss(size_average=False, "
                      "reduce=True)")):
    LOSSES[_name] = (_ctor, "m(R(3, 4), N(3, 4))", "train")
LOSSES["legacy_CrossEntropyLoss_size_average_False"] = (
    "nn.CrossEntropyLoss(size_average=False)", "m(R(3, 4), I(4, 3))", "train")
LOSSES["legacy_NLLLoss_reduce_False"] = ("nn.NLLLoss(reduce=False)", "m(R(3, 4), I(4, 3))",
                                         "train")
LOSSES["nan_CrossEntropyLoss_inf_logit"] = ("nn.CrossEntropyLoss()",
                                            "m(torch.where(T([[True, False, False], [False] * 3]),"
                                            " -float('inf'), R(2, 3)), T([1, 2]))", "train")
LOSSES["BCELoss_saturated_input"] = ("nn.BCELoss(reduction='none')",
                                     "m(RT([[0.0, 1.0, 0.5, 1.0]]), "
                                     "T([[1.0, 0.0, 1.0, 1.0]]).to(DT))",
                                     "train")

# --- max pooling: ties take the first maximum, NaN wins (the last NaN of a window) -----------
_TIES = "(lambda x: torch.cat([x, x.detach(), x * 1], -1))"
MODULES.update({
    "ties_MaxPool1d": ("nn.MaxPool1d(2, return_indices=True)", f"m({_TIES}(R(2, 2, 3)))",
                       "train"),
    "ties_MaxPool2d": ("nn.MaxPool2d(3, stride=2, padding=1)", f"m({_TIES}(R(1, 2, 4, 2)))",
                       "train"),
    "ties_MaxPool3d": ("nn.MaxPool3d(2, return_indices=True)",
                       f"m({_TIES}(R(1, 1, 2, 2, 2)))", "train"),
    "ties_AdaptiveMaxPool2d": ("nn.AdaptiveMaxPool2d((2, 3), return_indices=True)",
                               f"m({_TIES}(R(1, 2, 3, 2)))", "train"),
    "ties_after_ReLU_MaxPool2d": ("nn.Sequential(nn.Hardtanh(0.0, 0.3), nn.MaxPool2d(2))",
                                  "m(R(1, 2, 4, 4))", "train"),
    "nan_many_MaxPool2d_padded": ("nn.MaxPool2d(3, 2, 1, return_indices=True)",
                                  "m(torch.where(B(1, 2, 5, 5), float('nan'), R(1, 2, 5, 5)))",
                                  "train"),
    "nan_many_MaxPool3d": ("nn.MaxPool3d(2, return_indices=True)",
                           "m(torch.where(B(1, 1, 4, 4, 2), float('nan'), R(1, 1, 4, 4, 2)))",
                           "train"),
    "nan_many_AdaptiveMaxPool2d": ("nn.AdaptiveMaxPool2d(2, return_indices=True)",
                                   "m(torch.where(B(1, 2, 5, 5), float('nan'), "
                                   "R(1, 2, 5, 5)))", "train"),
})
_fn("fractional_max_pool2d", "F.fractional_max_pool2d(R(1, 2, 7, 6), 2, output_size=(4, 3), "
    "return_indices=True, _random_samples=U(1, 2, 2))")
_fn("fractional_max_pool2d_ratio", "F.fractional_max_pool2d(R(2, 1, 8, 8), (3, 2), "
    "output_ratio=(0.5, 0.5), _random_samples=U(2, 1, 2))")
_fn("fractional_max_pool3d", "F.fractional_max_pool3d(R(1, 1, 5, 6, 5), 2, output_size=3, "
    "return_indices=True, _random_samples=U(1, 1, 3))")
_fn("fractional_max_pool2d_nan_ties", "F.fractional_max_pool2d(torch.where(B(1, 2, 6, 6), "
    "float('nan'), torch.cat([R(1, 2, 6, 3)] * 2, -1)), 2, output_size=3, "
    "return_indices=True, _random_samples=U(1, 2, 2))")

# --- nn.utils: parametrizations, the older hook-based weight/spectral norm, functional_call -----
MODULES.update({
    "parametrizations.weight_norm": ("nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))",
                                     "m(R(2, 4))", "train"),
    "parametrizations.weight_norm_dim1_conv": ("nn.utils.parametrizations.weight_norm("
                                               "nn.Conv1d(2, 3, 2), dim=1)", "m(R(1, 2, 5))",
                                               "train"),
    "parametrizations.weight_norm_dim_None": ("nn.utils.parametrizations.weight_norm("
                                              "nn.Linear(3, 2), dim=None)", "m(R(2, 3))",
                                              "train"),
    "parametrizations.spectral_norm_train": ("nn.utils.parametrizations.spectral_norm("
                                             "nn.Linear(4, 3))", "m(R(2, 4))", "train"),
    "parametrizations.spectral_norm_eval": ("nn.utils.parametrizations.spectral_norm("
                                            "nn.Linear(4, 3), n_power_iterations=2)",
                                            "m(R(2, 4))", "eval"),
    "parametrizations.spectral_norm_conv_transpose": ("nn.utils.parametrizations."
                                                      "spectral_norm(nn.ConvTranspose1d(2, 3, "
                                                      "2))", "m(R(1, 2, 4))", "train"),
    "parametrizations.orthogonal": ("nn.utils.parametrizations.orthogonal(nn.Linear(3, 3))",
                                    "m(R(2, 3))", "train"),
    "utils.weight_norm": ("nn.utils.weight_norm(nn.Linear(4, 3))", "m(R(2, 4))", "train"),
    "utils.spectral_norm_train": ("nn.utils.spectral_norm(nn.Linear(4, 3))", "m(R(2, 4))",
                                  "train"),
    "utils.spectral_norm_eval": ("nn.utils.spectral_norm(nn.Linear(4, 3))", "m(R(2, 4))",
                                 "eval"),
    "stateless.functional_call": ("nn.Linear(4, 3)",
                                  "nn.utils.stateless.functional_call(m, {'weight': R(3, 4), "
                                  "'bias': R(3)}, (R(2, 4),))", "train"),
    "stateless.functional_call_buffers": ("nn.BatchNorm1d(3)",
                                          "nn.utils.stateless.functional_call(m, "
                                          "{'weight': R(3), 'running_mean': N(3)}, R(4, 3))",
                                          "train"),
})

# Second derivatives left out of the comparison, with the reason (checked by finite differences
# of the first derivatives under both libraries).
GG_NOT_COMPARED: dict[str, str] = {
    "parametrizations.weight_norm": "PyTorch's fused `_weight_norm` double backward is wrong for "
                                    "`original1` (v) with dim=0; central differences of the "
                                    "first gradient agree with Plait",
    "utils.weight_norm": "the same fused `_weight_norm` double backward in PyTorch (weight_v)",
    "BCELoss_saturated_input": "at inputs exactly 0 or 1 PyTorch's double-backward formula "
                               "places its 1e-12 differently from the derivative of its own "
                               "first-order formula",
}

# First derivatives (the input and parameter gradients) left out of the comparison, with the
# reason; outputs, buffers and second derivatives are still compared.
GRAD_NOT_COMPARED: dict[str, str] = {
    "CrossMapLRN2d": "PyTorch's hand-written legacy backward is not the derivative of its own "
                     "forward (it fails `gradcheck`: 2.5e-4 off central differences of "
                     "PyTorch's forward on this case, where Plait's gradient is within 4e-10)",
}

# --- larger shapes: the native kernels' blocked, vectorised and threaded paths -------------------
# (odd sizes leave SIMD tails; these run in float64 and float32 but not in the double-backward
# pass, which would be slow)
MODULES.update({
    "large_Linear": ("nn.Linear(256, 300)", "m(R(64, 256))", "train"),
    "large_Conv2d": ("nn.Conv2d(16, 32, 3, padding=1)", "m(R(4, 16, 24, 24))", "train"),
    "large_Conv2d_stride_groups": ("nn.Conv2d(32, 64, 3, stride=2, groups=4, padding=1)",
                                   "m(R(2, 32, 25, 23))", "train"),
    "large_Conv2d_depthwise": ("nn.Conv2d(32, 32, 5, groups=32, padding=2)",
                               "m(R(2, 32, 20, 21))", "train"),
    "large_Conv1d": ("nn.Conv1d(32, 48, 5, dilation=2)", "m(R(8, 32, 101))", "train"),
    "large_Conv3d": ("nn.Conv3d(4, 8, 3, padding=1)", "m(R(1, 4, 10, 9, 11))", "train"),
    "large_ConvTranspose2d": ("nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)",
                              "m(R(2, 16, 12, 13))", "train"),
    "large_LayerNorm": ("nn.LayerNorm(768)", "m(R(8, 16, 768))", "train"),
    "large_LayerNorm_odd": ("nn.LayerNorm(1031)", "m(R(7, 1031))", "train"),
    "large_RMSNorm": ("nn.RMSNorm(513)", "m(R(37, 513))", "train"),
    "large_Softmax": ("nn.Softmax(-1)", "m(R(64, 1000) * 3)", "train"),
    "large_LogSoftmax_odd": ("nn.LogSoftmax(-1)", "m(R(33, 1025) * 3)", "train"),
    "large_Softmax_dim1": ("nn.Softmax(dim=1)", "m(R(8, 100, 30))", "train"),
    "large_BatchNorm2d": ("nn.BatchNorm2d(32)", "m(R(8, 32, 16, 16))", "train"),
    "large_GroupNorm": ("nn.GroupNorm(8, 64)", "m(R(4, 64, 15, 15))", "train"),
    "large_MaxPool2d": ("nn.MaxPool2d(3, 2, 1)", "m(R(4, 32, 33, 33))", "train"),
    "large_AvgPool2d": ("nn.AvgPool2d(2)", "m(R(4, 32, 32, 32))", "train"),
    "large_AdaptiveAvgPool2d": ("nn.AdaptiveAvgPool2d((7, 7))", "m(R(2, 64, 30, 30))",
                                "train"),
    "large_MHA": ("nn.MultiheadAttention(64, 8, batch_first=True)",
                  "m(R(4, 50, 64), R(4, 60, 64), R(4, 60, 64), "
                  "key_padding_mask=T([[False] * 55 + [True] * 5] * 4))", "train"),
    "large_TransformerEncoderLayer": ("nn.TransformerEncoderLayer(64, 4, 256, 0.0, "
                                      "batch_first=True)", "m(R(4, 40, 64))", "train"),
    "large_LSTM": ("nn.LSTM(64, 128, num_layers=2, batch_first=True)", "m(R(8, 30, 64))",
                   "train"),
    "large_GRU_bidirectional": ("nn.GRU(32, 64, bidirectional=True)", "m(R(20, 8, 32))",
                                "train"),
    "large_Embedding": ("nn.Embedding(5000, 128)", "m(I(5000, 32, 20))", "train"),
    "large_EmbeddingBag": ("nn.EmbeddingBag(1000, 64, mode='sum')",
                           "m(I(1000, 200), T(list(range(0, 200, 7))))", "train"),
    "large_GELU": ("nn.GELU()", "m(R(128, 513) * 3)", "train"),
    "large_SiLU_tanh_sigmoid": ("nn.Sequential(nn.SiLU(), nn.Tanh(), nn.Sigmoid())",
                                "m(R(64, 1001) * 3)", "train"),
})
LOSSES.update({
    "large_CrossEntropyLoss": ("nn.CrossEntropyLoss(label_smoothing=0.1)",
                               "m(R(256, 1000) * 2, I(1000, 256))", "train"),
    "large_NLLLoss_weight": ("nn.NLLLoss(weight=U(100))", "m(R(512, 100), I(100, 512))",
                             "train"),
    "large_BCEWithLogitsLoss": ("nn.BCEWithLogitsLoss()", "m(R(512, 100) * 3, U(512, 100))",
                                "train"),
    "large_MSELoss": ("nn.MSELoss()", "m(R(1000, 100), N(1000, 100))", "train"),
    "large_CTCLoss": ("nn.CTCLoss()", "m(R(50, 4, 20).log_softmax(2), I(19, 4, 10) + 1, "
                      "[50, 45, 40, 30], [10, 9, 8, 5])", "train"),
})
_fn("large_sdpa_causal", "F.scaled_dot_product_attention(R(2, 4, 128, 64), R(2, 4, 128, 64), "
    "R(2, 4, 128, 64), is_causal=True)")
_fn("large_sdpa_float_mask", "F.scaled_dot_product_attention(R(2, 4, 100, 32), "
    "R(2, 4, 70, 32), R(2, 4, 70, 48), attn_mask=N(100, 70))")
_fn("large_sdpa_bool_mask_gqa", "F.scaled_dot_product_attention(R(1, 8, 65, 16), "
    "R(1, 2, 77, 16), R(1, 2, 77, 16), attn_mask=B(65, 77) | T([True] + [False] * 76), "
    "enable_gqa=True)")
_fn("large_interpolate_bilinear", "F.interpolate(R(2, 16, 32, 32), size=(64, 48), "
    "mode='bilinear')")
_fn("large_interpolate_bicubic_align", "F.interpolate(R(1, 8, 30, 31), scale_factor=1.5, "
    "mode='bicubic', align_corners=True)")
_fn("large_grid_sample", "F.grid_sample(R(2, 8, 32, 32), RU(2, 20, 24, 2, lo=-1.1, hi=1.1), "
    "align_corners=False)")
_fn("large_unfold", "F.unfold(R(2, 16, 20, 20), 3, padding=1)")
_fn("large_pad_reflect", "F.pad(R(4, 16, 40, 40), (3, 3, 3, 3), mode='reflect')")

# --- ceil_mode windows that would start in the right padding (dropped), and their divisors ----
MODULES.update({
    "ceil_drop_MaxPool1d": ("nn.MaxPool1d(2, 2, 1, ceil_mode=True, return_indices=True)",
                            "m(R(1, 2, 5))", "train"),
    "ceil_drop_MaxPool2d_dilated": ("nn.MaxPool2d(3, 2, 1, dilation=(1, 2), ceil_mode=True)",
                                    "m(R(1, 1, 6, 9))", "train"),
    "ceil_drop_AvgPool1d": ("nn.AvgPool1d(2, 2, 1, ceil_mode=True)", "m(R(1, 2, 5))", "train"),
    "ceil_AvgPool1d_past_padding": ("nn.AvgPool1d(4, 3, 1, ceil_mode=True)", "m(R(1, 1, 8))",
                                    "train"),
    "ceil_AvgPool2d_exclude_pad": ("nn.AvgPool2d(3, 2, 1, ceil_mode=True, "
                                   "count_include_pad=False)", "m(R(1, 1, 6, 7))", "train"),
    "ceil_AvgPool2d_divisor_override": ("nn.AvgPool2d(3, 2, 1, ceil_mode=True, "
                                        "divisor_override=2)", "m(R(1, 1, 6, 6))", "train"),
    "ceil_AvgPool3d_past_padding": ("nn.AvgPool3d(3, 2, 1, ceil_mode=True)",
                                    "m(R(1, 1, 4, 6, 5))", "train"),
    "ceil_LPPool1d": ("nn.LPPool1d(2, 3, 2, ceil_mode=True)", "m(R(1, 2, 8))", "train"),
})

# --- losses over unusual shapes: unbatched, broadcast weights, homoscedastic variance ----------
LOSSES.update({
    "shape_NLLLoss_unbatched": ("nn.NLLLoss()", "m(R(5), T(2))", "train"),
    "shape_NLLLoss_unbatched_weight_ignored": ("nn.NLLLoss(weight=U(5), ignore_index=2)",
                                               "m(R(5), T(2))", "train"),
    "shape_CrossEntropyLoss_unbatched_probs": ("nn.CrossEntropyLoss(label_smoothing=0.2)",
                                               "m(R(5), P(5))", "train"),
    "shape_BCEWithLogits_pos_weight_4d": ("nn.BCEWithLogitsLoss(pos_weight=U(3, 1, 1) * 2)",
                                          "m(R(2, 3, 2, 2), U(2, 3, 2, 2))", "train"),
    "shape_MultiMarginLoss_unbatched": ("nn.MultiMarginLoss(reduction='none')",
                                        "m(R(4), T(1))", "train"),
    "shape_MultiLabelMarginLoss_unbatched": ("nn.MultiLabelMarginLoss(reduction='none')",
                                             "m(R(4), T([2, 0, -1, 3]))", "train"),
    "shape_MultiLabelSoftMargin_1d_weight": ("nn.MultiLabelSoftMarginLoss(reduction='none')",
                                             "m(R(2, 4), U(2, 4))", "train"),
    "shape_HingeEmbeddingLoss_1d": ("nn.HingeEmbeddingLoss(reduction='none')",
                                    "m(R(5), S(5))", "train"),
    "shape_CosineEmbeddingLoss_unbatched": ("nn.CosineEmbeddingLoss(reduction='none')",
                                            "m(R(5), R(5), T(-1.0).to(DT))", "train"),
    "shape_TripletMarginLoss_unbatched": ("nn.TripletMarginLoss(reduction='none')",
                                          "m(R(5), R(5), R(5))", "train"),
    "shape_GaussianNLLLoss_var_one_fewer_dim": ("nn.GaussianNLLLoss(reduction='none')",
                                                "m(R(4, 3), N(4, 3), RA(4))", "train"),
    "shape_GaussianNLLLoss_scalar_var": ("nn.GaussianNLLLoss()",
                                         "m(R(4, 3), N(4, 3), RA(1))", "train"),
    "shape_KLDivLoss_3d_mean": ("nn.KLDivLoss(reduction='mean')",
                                "m(R(2, 3, 4).log_softmax(-1), P(2, 3, 4))", "train"),
    "shape_L1Loss_int_target": ("nn.L1Loss()", "m(R(3, 4), I(3, 3, 4))", "train"),
    "shape_MSELoss_0d": ("nn.MSELoss()", "m(R(), N())", "train"),
    "shape_SmoothL1Loss_broadcast_input": ("nn.SmoothL1Loss(reduction='none')",
                                           "m(R(1, 4), N(3, 4))", "train"),
    "shape_PoissonNLL_eps": ("nn.PoissonNLLLoss(log_input=False, eps=0.5)",
                             "m(RU(3, 4), U(3, 4) * 3)", "train"),
    "shape_MarginRanking_broadcast": ("nn.MarginRankingLoss(0.3, reduction='none')",
                                      "m(R(4), R(1), S(4))", "train"),
})

# --- mixed dtypes: losses promote, layers refuse ------------------------------------------------
# (not huber_loss / binary_cross_entropy: PyTorch's backward refuses mixed dtypes there; not
# binary_cross_entropy_with_logits: PyTorch returns the target's dtype)
for _loss in ("mse_loss", "l1_loss", "smooth_l1_loss", "soft_margin_loss", "kl_div",
              "poisson_nll_loss"):
    _fn(f"mixed_dtype_{_loss}", f"F.{_loss}(R(3, 4), U(3, 4).float())")
_fn("mixed_dtype_cross_entropy_probs", "F.cross_entropy(R(3, 4), P(3, 4).float())")
_fn("mixed_dtype_cosine_similarity", "F.cosine_similarity(R(3, 4), N(3, 4).float())")
_fn("mixed_dtype_pairwise_distance", "F.pairwise_distance(R(3, 4), N(3, 4).float())")
for _name, _call in (("linear_dtype_mismatch", "F.linear(R(2, 3), N(4, 3).float())"),
                     ("conv2d_dtype_mismatch", "F.conv2d(R(1, 1, 4, 4), N(1, 1, 2, 2).float())"),
                     ("embedding_half_index", "F.embedding(N(3).half(), R(4, 2))"),
                     ("sdpa_dtype_mismatch", "F.scaled_dot_product_attention(R(1, 2, 3), "
                                             "N(1, 2, 3).float(), R(1, 2, 3))"),
                     ("lstm_dtype_mismatch", "nn.LSTM(2, 3)(R(4, 1, 2).float().double())"
                                             " if DT == torch.float64 else nn.LSTM(2, 3)"
                                             "(R(4, 1, 2).double())")):
    ERRORS[_name] = (None, _call, "train")

# --- nn.utils.rnn helpers -----------------------------------------------------------------------
ERRORS["gru_dtype_mismatch"] = ("nn.GRU(2, 3)", "m(R(4, 1, 2).float())", "train")
ERRORS["lstm_packed_dtype_mismatch"] = ("nn.LSTM(2, 3)", "m(nn.utils.rnn.pack_sequence("
                                        "[R(3, 2).float()]))", "train")
ERRORS["rnn_cell_dtype_mismatch"] = ("nn.RNNCell(2, 3)", "m(R(1, 2).float())", "train")

_fn("pad_sequence", "nn.utils.rnn.pad_sequence([R(3, 2), R(1, 2), R(4, 2)])")
_fn("pad_sequence_batch_first_value", "nn.utils.rnn.pad_sequence([R(2), R(4)], "
    "batch_first=True, padding_value=-1.5)")
_fn("pad_sequence_left", "nn.utils.rnn.pad_sequence([R(2, 3), R(4, 3)], batch_first=True, "
    "padding_side='left')")
_fn("pack_sequence_roundtrip", "nn.utils.rnn.pad_packed_sequence(nn.utils.rnn.pack_sequence("
    "[R(2, 3), R(4, 3), R(1, 3)], enforce_sorted=False), total_length=6)")
_fn("unpad_sequence", "nn.utils.rnn.unpad_sequence(R(5, 3, 2) * 1, T([5, 2, 3]))")
_fn("unpack_sequence", "nn.utils.rnn.unpack_sequence(nn.utils.rnn.pack_sequence("
    "[R(3, 2), R(1, 2), R(2, 2)], enforce_sorted=False))")
_fn("pack_padded_batch_sizes", "nn.utils.rnn.pack_padded_sequence(R(4, 3, 2), T([4, 1, 3]), "
    "enforce_sorted=False)")

# --- inference (eval + no_grad): PyTorch's fused "fast paths" for attention and encoders --------
_NG = "torch.no_grad()(lambda: {})()"
MODULES.update({
    "fastpath_MHA": ("nn.MultiheadAttention(8, 2, batch_first=True)",
                     _NG.format("(lambda x: m(x, x, x))(N(2, 5, 8))"), "eval"),
    "fastpath_MHA_kpm": ("nn.MultiheadAttention(8, 2, batch_first=True)",
                         _NG.format("(lambda x: m(x, x, x, key_padding_mask=T([[False] * 4 + "
                                    "[True], [False] * 5]), need_weights=False))(N(2, 5, 8))"),
                         "eval"),
    "fastpath_TransformerEncoderLayer": ("nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)",
                                         _NG.format("m(N(2, 5, 8))"), "eval"),
    "fastpath_TransformerEncoder_nested_padding": (
        "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)",
        _NG.format("m(N(2, 5, 8), src_key_padding_mask=T([[False] * 3 + [True] * 2, "
                   "[False] * 5]))"), "eval"),
    "fastpath_TransformerEncoderLayer_norm_first_gelu": (
        "nn.TransformerEncoderLayer(8, 2, 16, activation='gelu', norm_first=True, "
        "batch_first=True)", _NG.format("m(N(2, 5, 8), src_key_padding_mask=T([[False] * 4 + "
                                        "[True], [False] * 5]))"), "eval"),
})

# --- exact kinks and boundaries: which side's derivative each activation/loss takes -------------
_KINKS = "RT([-6.0, -3.0, -1.0, -0.5, -0.4, 0.0, 0.2, 0.4, 0.5, 1.0, 3.0, 6.0, 20.0])"
for _ctor in ("nn.ReLU()", "nn.ReLU6()", "nn.LeakyReLU(0.1)", "nn.PReLU(init=0.3)",
              "nn.RReLU(0.1, 0.3)", "nn.ELU()", "nn.CELU(0.5)", "nn.SELU()", "nn.GELU()",
              "nn.Hardsigmoid()", "nn.Hardtanh(-1.0, 1.0)", "nn.Hardswish()",
              "nn.Softplus(beta=1.0, threshold=20.0)", "nn.Softshrink(0.5)",
              "nn.Hardshrink(0.5)", "nn.Threshold(0.2, -1.0)", "nn.Threshold(0.4, 0.4)",
              "nn.Tanhshrink()", "nn.Mish()", "nn.SiLU()", "nn.LogSigmoid()"):
    MODULES["kinks_" + _ctor[3:]] = (_ctor, f"m({_KINKS})", "eval" if "RReLU" in _ctor
                                     else "train")
for _name, _ctor, _call in (
        ("kinks_L1Loss", "nn.L1Loss(reduction='none')", "m(RT([1.0, 2.0, -1.0]), "
         "T([1.0, 3.0, -1.0]).to(DT))"),
        ("kinks_SmoothL1Loss", "nn.SmoothL1Loss(beta=0.5, reduction='none')",
         "m(RT([0.5, -0.5, 0.0, 1.0]), T([0.0, 0.0, 0.0, 0.5]).to(DT))"),
        ("kinks_HuberLoss", "nn.HuberLoss(delta=0.5, reduction='none')",
         "m(RT([0.5, -0.5, 0.0, 1.0]), T([0.0, 0.0, 0.0, 0.5]).to(DT))"),
        ("kinks_MarginRankingLoss", "nn.MarginRankingLoss(0.5, reduction='none')",
         "m(RT([1.0, 0.5, 2.0]), RT([0.5, 0.0, 1.0]), T([-1.0, -1.0, 1.0]).to(DT))"),
        ("kinks_HingeEmbeddingLoss", "nn.HingeEmbeddingLoss(1.0, reduction='none')",
         "m(RT([1.0, 0.5, 2.0, 0.0]), T([-1.0, -1.0, 1.0, -1.0]).to(DT))"),
        ("kinks_MultiMarginLoss", "nn.MultiMarginLoss(reduction='none')",
         "m(RT([[1.0, 0.0, 0.5], [0.2, 0.2, 0.2]]), T([0, 1]))"),
        ("kinks_TripletMarginLoss_zero_distance", "nn.TripletMarginLoss(reduction='none')",
         "m(RT([[1.0, 2.0]]), RT([[1.0, 2.0]]), RT([[2.0, 2.0]]))"),
        ("kinks_KLDivLoss_zero_target", "nn.KLDivLoss(reduction='sum')",
         "m(R(2, 3).log_softmax(-1), T([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]).to(DT))"),
        ("kinks_GaussianNLLLoss_var_below_eps", "nn.GaussianNLLLoss(eps=0.5)",
         "m(R(4, 3), N(4, 3), RU(4, 3))"),
        ("kinks_PoissonNLL_full_target_le1", "nn.PoissonNLLLoss(full=True, reduction='none')",
         "m(R(5), T([0.0, 0.5, 1.0, 1.5, 2.0]).to(DT))"),
        ("huge_CrossEntropyLoss", "nn.CrossEntropyLoss(label_smoothing=0.1)",
         "m(R(3, 4) * 1e4, T([0, 1, 3]))"),
        ("huge_BCEWithLogitsLoss", "nn.BCEWithLogitsLoss(pos_weight=U(4))",
         "m(R(3, 4) * 100, U(3, 4))")):
    LOSSES[_name] = (_ctor, _call, "train")

# --- degenerate values: zero vectors, constant rows, identical points -------------------------
MODULES.update({
    "degenerate_LayerNorm_constant_row": ("nn.LayerNorm(4)",
                                          "m(RT([[1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 2.0, 3.0]]))",
                                          "train"),
    "degenerate_GroupNorm_constant_group": ("nn.GroupNorm(2, 4)",
                                            "m(RT([[[2.0, 2.0], [2.0, 2.0], [0.0, 1.0], "
                                            "[3.0, -1.0]]]))", "train"),
    "degenerate_BatchNorm1d_constant_channel": ("nn.BatchNorm1d(2)",
                                                "m(RT([[1.0, 0.5], [1.0, -0.5], [1.0, 2.0]]))",
                                                "train"),
    "degenerate_RMSNorm_zero_row": ("nn.RMSNorm(3)", "m(RT([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]))",
                                    "train"),
    "degenerate_CosineSimilarity_zero": ("nn.CosineSimilarity()",
                                         "m(RT([[0.0, 0.0], [1.0, 2.0]]), RT([[1.0, 1.0], "
                                         "[0.0, 0.0]]))", "train"),
    "degenerate_PairwiseDistance_same": ("nn.PairwiseDistance()",
                                         "(lambda x: m(x, x.detach()))(R(3, 4))", "train"),
    "degenerate_Softmax_huge": ("nn.Softmax(-1)", "m(R(3, 4) * 1000)", "train"),
})
_fn("degenerate_normalize_zero_row", "F.normalize(RT([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]]))")
_fn("degenerate_pdist_identical_rows", "F.pdist(RT([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]))")
_fn("degenerate_interpolate_to_1x1_align", "F.interpolate(R(1, 2, 3, 4), size=(1, 1), "
    "mode='bilinear', align_corners=True)")
_fn("degenerate_interpolate_from_1_align", "F.interpolate(R(1, 2, 1, 1), size=(3, 2), "
    "mode='bicubic', align_corners=True)")
_fn("degenerate_interpolate_linear_from_1", "F.interpolate(R(1, 2, 1), size=4, mode='linear')")
_fn("degenerate_affine_grid_size1", "F.affine_grid(R(1, 2, 3), [1, 1, 1, 4], "
    "align_corners=False)")
_fn("degenerate_affine_grid_size1_align", "F.affine_grid(R(1, 2, 3), [1, 1, 3, 1], "
    "align_corners=True)")
for _pad in ("border", "reflection", "zeros"):
    for _align in (False, True):
        _fn(f"wide_grid_sample_{_pad}_align{_align}",
            f"F.grid_sample(R(1, 1, 3, 4), RU(1, 5, 6, 2, lo=-4.0, hi=4.0), "
            f"padding_mode={_pad!r}, align_corners={_align})")
    _fn(f"wide_grid_sample_3d_{_pad}", f"F.grid_sample(R(1, 1, 2, 3, 3), RU(1, 2, 3, 4, 3, "
        f"lo=-3.5, hi=3.5), padding_mode={_pad!r}, align_corners=False)")
    _fn(f"wide_grid_sample_bicubic_{_pad}", f"F.grid_sample(R(1, 1, 4, 4), RU(1, 3, 5, 2, "
        f"lo=-3.0, hi=3.0), mode='bicubic', padding_mode={_pad!r}, align_corners=False)")
_fn("pad_circular_negative", "F.pad(R(1, 2, 5), (-1, 2), mode='circular')")
ERRORS["one_hot_empty_infer"] = (None, "F.one_hot(I(3, 0))", "train")

# --- more lazy modules, torch.func, and PyTorch classes outside issue 6 (reported unavailable
# until Plait has them) ---------------------------------------------------------------------------
MODULES.update({
    "LazyConv1d": ("nn.LazyConv1d(4, 3, padding=1)", "m(R(2, 3, 6))", "train"),
    "LazyConvTranspose2d": ("nn.LazyConvTranspose2d(3, 2, stride=2)", "m(R(1, 2, 3, 3))",
                            "train"),
    "func.functional_call_kwargs": ("nn.Linear(4, 3)",
                                    "torch.func.functional_call(m, ({'weight': R(3, 4)}, "
                                    "{'bias': R(3)}), (), {'input': R(2, 4)})", "train"),
    "LazyBatchNorm1d": ("nn.LazyBatchNorm1d()", "m(R(4, 3))", "train"),
    "LazyInstanceNorm2d": ("nn.LazyInstanceNorm2d(affine=True)", "m(R(2, 3, 4, 4))", "train"),
    "AdaptiveLogSoftmaxWithLoss": ("nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8], div_value=2.0)",
                                   "m(R(5, 8), T([0, 3, 5, 9, 7]))", "train"),
    "CrossMapLRN2d": ("nn.CrossMapLRN2d(3)", "m(R(2, 4, 3, 3))", "train"),
})
LOSSES["NLLLoss2d"] = ("nn.NLLLoss2d()", "m(R(2, 3, 2, 2), I(3, 2, 2, 2))", "train")

# --- legacy implicit softmax dims, deterministic corners of the random layers ------------------
MODULES.update({
    "implicit_dim_Softmax_3d": ("nn.Softmax()", "m(R(2, 3, 4))", "train"),
    "implicit_dim_Softmax_2d": ("nn.Softmax()", "m(R(3, 4))", "train"),
    "implicit_dim_LogSoftmax_4d": ("nn.LogSoftmax()", "m(R(2, 3, 2, 2))", "train"),
    "implicit_dim_Softmin_1d": ("nn.Softmin()", "m(R(5))", "train"),
    "Dropout_p1_train": ("nn.Dropout(1.0)", "m(R(3, 4))", "train"),
    "Dropout2d_p1_train": ("nn.Dropout2d(1.0)", "m(R(2, 3, 2, 2))", "train"),
    "RReLU_train_fixed_slope": ("nn.RReLU(0.2, 0.2)", "m(R(4, 5))", "train"),
    "Unflatten_minus_one": ("nn.Unflatten(-1, (2, -1))", "m(R(3, 6))", "train"),
    "Flatten_1d": ("nn.Flatten(0)", "m(R(5))", "train"),
})
_fn("implicit_dim_F.softmax", "F.softmax(R(2, 3, 4))")
_fn("implicit_dim_F.log_softmax_2d", "F.log_softmax(R(3, 4))")
_fn("implicit_dim_F.softmin_0d", "F.softmin(R())")
_fn("dropout_p1", "F.dropout(R(3, 4), p=1.0)")
_fn("alpha_dropout_p1", "F.alpha_dropout(R(3, 4), p=1.0, training=True)")
_fn("feature_alpha_dropout_p1", "F.feature_alpha_dropout(R(2, 3, 4), p=1.0, training=True)")
_fn("rrelu_train_fixed_slope", "F.rrelu(R(3, 4), 0.3, 0.3, training=True)")
_fn("gumbel_softmax_tau_hard_shape", "F.gumbel_softmax(R(3, 4), tau=0.5, hard=True).sum(-1)")

# --- more recurrent / transformer / embedding corners --------------------------------------------
MODULES.update({
    "Transformer_memory_mask_tgt_causal": ("nn.Transformer(8, 2, 1, 2, 16, 0.0)",
                                           "m(R(5, 2, 8), R(4, 2, 8), memory_mask=B(4, 5), "
                                           "tgt_mask=nn.Transformer."
                                           "generate_square_subsequent_mask(4, dtype=DT), "
                                           "tgt_is_causal=True, memory_key_padding_mask="
                                           "T([[False] * 5, [False] * 3 + [True] * 2]))", "train"),
    "GRU_batch_first_h0": ("nn.GRU(3, 4, batch_first=True, num_layers=2)",
                           "m(R(2, 5, 3), R(2, 2, 4))", "train"),
    "GRU_packed_bidirectional_h0": ("nn.GRU(3, 4, bidirectional=True)",
                                    "m(nn.utils.rnn.pack_sequence([R(4, 3), R(2, 3)]), "
                                    "R(2, 2, 4))", "train"),
    "LSTM_proj_unbatched_h0": ("nn.LSTM(3, 4, proj_size=2)", "m(R(5, 3), (R(1, 2), R(1, 4)))",
                               "train"),
    "RNN_packed_unsorted_h0": ("nn.RNN(3, 4, num_layers=2)",
                               "m(nn.utils.rnn.pack_sequence([R(2, 3), R(4, 3), R(3, 3)], "
                               "enforce_sorted=False), R(2, 3, 4))", "train"),
    "Conv1d_same_reflect_even": ("nn.Conv1d(2, 3, 4, padding='same', padding_mode='reflect')",
                                 "m(R(1, 2, 7))", "train"),
    "Conv3d_same_dilated": ("nn.Conv3d(1, 2, 3, padding='same', dilation=(1, 2, 1))",
                            "m(R(1, 1, 4, 5, 4))", "train"),
    "ConvTranspose1d_output_size": ("nn.ConvTranspose1d(2, 3, 3, stride=3)",
                                    "m(R(1, 2, 4), output_size=[13])", "train"),
    "ConvTranspose3d_output_size": ("nn.ConvTranspose3d(1, 2, 2, stride=2)",
                                    "m(R(1, 1, 2, 2, 2), output_size=(5, 4, 5))", "train"),
    "EmbeddingBag_from_pretrained": ("nn.EmbeddingBag.from_pretrained(torch.zeros(6, 3), "
                                     "freeze=False, mode='max')", "m(I(6, 2, 3))", "train"),
    "EmbeddingBag_empty_bags_mean": ("nn.EmbeddingBag(6, 3, mode='mean')",
                                     "m(I(6, 5), T([0, 0, 3, 5]))", "train"),
    "EmbeddingBag_empty_bags_max": ("nn.EmbeddingBag(6, 3, mode='max')",
                                    "m(I(6, 5), T([0, 2, 2, 5]))", "train"),
    "Embedding_from_pretrained_max_norm": ("nn.Embedding.from_pretrained(torch.zeros(5, 3), "
                                           "max_norm=0.5, freeze=False)", "m(I(5, 4))",
                                           "train"),
})
LOSSES.update({
    "CTCLoss_empty_target": ("nn.CTCLoss(reduction='none')",
                             "m(R(4, 2, 3).log_softmax(2), T([[1, 2], [0, 0]]), [4, 3], [2, 0])",
                             "train"),
    "CTCLoss_empty_target_mean": ("nn.CTCLoss()",
                                  "m(R(4, 2, 3).log_softmax(2), T([1, 2]), [4, 3], [2, 0])",
                                  "train"),
    "CosineEmbeddingLoss_negative_margin": ("nn.CosineEmbeddingLoss(margin=-0.3)",
                                            "m(R(4, 5), R(4, 5), S(4))", "train"),
})
_fn("generate_square_subsequent_mask", "nn.Transformer.generate_square_subsequent_mask(4)")
_fn("generate_square_subsequent_mask_dtype",
    "nn.Transformer.generate_square_subsequent_mask(3, dtype=DT)")

# --- half precision (PyTorch computes these in float32 and rounds) -------------------------------
_fn("half_softplus_mish", "(F.softplus(T([5.0, 12.0, 15.0, 19.0]).half()), "
    "F.mish(T([5.0, 12.0, 15.0]).half()))")
_fn("half_batch_norm_constant_channel", "(lambda x: (F.batch_norm(x, None, None, "
    "training=True), torch.autograd.grad((F.batch_norm(x, None, None, training=True) * "
    "T([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).half()).sum(), x)[0]))(T([[1.0, 0.5], "
    "[1.0, -0.5], [1.0, 2.0]]).half().requires_grad_())")
_fn("bfloat16_rms_norm_eps_none", "(lambda x: torch.autograd.grad(F.rms_norm(x, (3,)).sum(), "
    "x)[0])(torch.zeros(3, dtype=torch.bfloat16, requires_grad=True))")
