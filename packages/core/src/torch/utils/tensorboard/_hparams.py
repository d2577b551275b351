"""The three summaries of TensorBoard's hparams plugin: the experiment (which hyperparameters and
metrics exist), a session's start (its hyperparameter values) and its end."""

from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.plugins.hparams import api_pb2, metadata
from tensorboard.plugins.hparams.plugin_data_pb2 import (
    HParamsPluginData,
    SessionEndInfo,
    SessionStartInfo,
)

import torch

from ._convert import make_np

# Python type of a hyperparameter -> (hparams DataType, field of struct_pb2.Value). Checked in
# this order: as in PyTorch, a bool is an int here and is recorded as a number.
_KINDS: tuple[tuple[type | tuple[type, ...], str, str], ...] = (
    ((int, float), "DATA_TYPE_FLOAT64", "number_value"),
    (str, "DATA_TYPE_STRING", "string_value"),
    (bool, "DATA_TYPE_BOOL", "bool_value"),
)


def _kind_of(value: Any) -> tuple[str, str]:
    for types, data_type, field in _KINDS:
        if isinstance(value, types):
            return data_type, field
    raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")


def _summary(tag: str, content: HParamsPluginData) -> Summary:
    content.version = metadata.PLUGIN_DATA_VERSION
    data = SummaryMetadata.PluginData(plugin_name=metadata.PLUGIN_NAME,
                                      content=content.SerializeToString())
    return Summary(value=[Summary.Value(tag=tag, metadata=SummaryMetadata(plugin_data=data))])


def _check_discrete(hparam_dict: dict[str, Any], domains: dict[str, Any]) -> None:
    for name, choices in domains.items():
        if (name not in hparam_dict or not isinstance(choices, list)
                or not all(isinstance(c, type(hparam_dict[name])) for c in choices)):
            raise TypeError(f"parameter: hparam_domain_discrete[{name}] should be a list of "
                            f"same type as hparam_dict[{name}].")


def hparams(hparam_dict: dict[str, Any] | None = None,
            metric_dict: dict[str, Any] | None = None,
            hparam_domain_discrete: dict[str, list[Any]] | None = None
            ) -> tuple[Summary, Summary, Summary]:
    """The experiment, session-start and session-end summaries for one run's hyperparameters
    (values: int, float, str, bool, a one-element tensor; ``None`` is left out) and the names
    of its metrics; ``hparam_domain_discrete`` lists the values a hyperparameter can take."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing "
                        "logged.")
    _check_discrete(hparam_dict, domains)

    infos = []
    start = SessionStartInfo()
    for name, value in hparam_dict.items():
        if value is None:
            continue
        if isinstance(value, torch.Tensor):
            value = float(make_np(value).reshape(-1)[0])
        data_type, field = _kind_of(value)
        setattr(start.hparams[name], field, value)
        discrete = None
        if name in domains:
            discrete = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: choice}) for choice in domains[name]])
        infos.append(api_pb2.HParamInfo(name=name, type=api_pb2.DataType.Value(data_type),
                                        domain_discrete=discrete))

    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=tag)) for tag in metric_dict]
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)
    end = SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))
    return (_summary(metadata.EXPERIMENT_TAG, HParamsPluginData(experiment=experiment)),
            _summary(metadata.SESSION_START_INFO_TAG, HParamsPluginData(session_start_info=start)),
            _summary(metadata.SESSION_END_INFO_TAG, HParamsPluginData(session_end_info=end)))
