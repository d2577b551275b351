"""``torch.optim``: optimizers and learning-rate schedulers (plait-nn, docs/architecture.md).

This distribution adds ``torch.optim`` to plait-core's ``torch`` package: ``Optimizer`` (groups,
state, ``state_dict`` in PyTorch's layout, step hooks), the optimizers (SGD, Adam, AdamW,
Adamax, NAdam, RAdam, RMSprop, Adagrad, Adadelta, ASGD, Rprop, LBFGS, Adafactor,
SparseAdam, Muon), ``lr_scheduler`` and
``swa_utils``.
"""

from . import lr_scheduler, optimizer, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler",
           "optimizer", "swa_utils"]
