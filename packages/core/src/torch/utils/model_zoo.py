"""``torch.utils.model_zoo``: PyTorch's older home of :func:`torch.hub.load_state_dict_from_url`
(as ``load_url``) and of the hub's progress bar, kept for the packages that import from it."""

from torch.hub import load_state_dict_from_url as load_url, tqdm

__all__ = ["load_url", "tqdm"]
