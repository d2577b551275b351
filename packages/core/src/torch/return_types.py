"""``torch.return_types``: the named tuples of ops with several results (``max``, ``sort``...).

The classes live in :mod:`torch._aten.reductions`, which registers this name in ``sys.modules`` when
it loads; importing this module loads it (and with it the op surface) and yields that object.
"""

import sys

from torch._aten.reductions import return_types as _return_types

sys.modules[__name__] = _return_types
