"""The process-wide generators of a training run, as JSON: what an exact ``--resume`` restores.

SB3 draws from three global generators while it learns: PyTorch's (the policy's sampled actions,
dropout if any), NumPy's legacy one (the minibatch permutations of ``RolloutBuffer.get``) and
Python's ``random``. A checkpoint stores all three (and CUDA's, where it is in use) so a run
resumed from it draws exactly what the run that never stopped drew. The values are plain JSON
(lists of integers, base64 of PyTorch's byte tensors): nothing in a checkpoint is unpickled.

>>> import numpy as np
>>> state = capture()
>>> a = np.random.random()
>>> restore(state)
>>> bool(np.random.random() == a)
True
"""

from __future__ import annotations

import base64
import random
from typing import Any

import numpy as np

__all__ = ["capture", "restore"]


def _bytes_tensor_to_text(tensor) -> str:
    return base64.b64encode(tensor.numpy().tobytes()).decode("ascii")


def _text_to_bytes_tensor(text: str):
    import torch

    return torch.frombuffer(bytearray(base64.b64decode(text)), dtype=torch.uint8).clone()


def capture() -> dict[str, Any]:
    """The states of Python's, NumPy's and PyTorch's (CPU and every CUDA device's) global generators."""
    import torch

    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state: dict[str, Any] = {
        "python": {"version": version, "state": list(internal), "gauss_next": gauss},
        "numpy": {"kind": kind, "keys": [int(k) for k in keys], "pos": int(pos), "has_gauss": int(has_gauss),
                  "cached_gaussian": float(cached)},
        "torch": _bytes_tensor_to_text(torch.get_rng_state()),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["torch_cuda"] = [_bytes_tensor_to_text(s) for s in torch.cuda.get_rng_state_all()]
    return state


def restore(state: dict[str, Any]) -> None:
    """Put the generators back as :func:`capture` found them; ValueError if ``state`` is not one."""
    import torch

    try:
        py, npy = state["python"], state["numpy"]
        random.setstate((int(py["version"]), tuple(int(x) for x in py["state"]), py["gauss_next"]))
        np.random.set_state((str(npy["kind"]), np.array(npy["keys"], dtype=np.uint32), int(npy["pos"]),
                             int(npy["has_gauss"]), float(npy["cached_gaussian"])))
        torch.set_rng_state(_text_to_bytes_tensor(state["torch"]))
        if "torch_cuda" in state and torch.cuda.is_available():
            torch.cuda.set_rng_state_all([_text_to_bytes_tensor(s) for s in state["torch_cuda"]])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"not a generator state ({type(exc).__name__}: {exc})") from exc
