"""Utilities as ``torch.nn.utils`` (``rnn``: packing variable-length sequences)."""

from funcgrad_nn.utils import rnn

__all__ = ["rnn"]
