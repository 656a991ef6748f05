"""Chunk vectors that live on disk: a ``.npy`` file read by blocks, never loaded whole.

``np.load(path, mmap_mode="r")`` works too (any array is sliced by block), but
every page a memory map touches stays in the process's resident set until the
kernel needs it back; :class:`VectorFile` reads each block with ``pread`` into a
fresh buffer, so resident memory stays at one block whatever the corpus size.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = ["VectorFile", "save_vectors", "rows_of"]


class VectorFile:
    """A read-only (rows x dim) ``.npy`` matrix, read by slices or sorted positions.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "v.npy")
    >>> save_vectors(path, np.eye(3, dtype=np.float32))
    >>> vf = VectorFile(path); vf.shape, vf[1:3].tolist(), vf[np.array([2, 0])].tolist()
    ((3, 3), [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        with open(self.path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(f)
            self.offset = f.tell()
        if fortran or len(shape) != 2:
            raise ValueError(f"{self.path}: expected a C-order 2-d array, got shape {shape}")
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self._row = self.shape[1] * self.dtype.itemsize
        self._fd = os.open(self.path, os.O_RDONLY)

    def __len__(self) -> int:
        return self.shape[0]

    def __del__(self):
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)
            self._fd = None

    def _read(self, start: int, stop: int) -> np.ndarray:
        n = max(0, stop - start)
        buf = os.pread(self._fd, n * self._row, self.offset + start * self._row)
        return np.frombuffer(buf, dtype=self.dtype).reshape(n, self.shape[1])

    def __getitem__(self, key) -> np.ndarray:
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise ValueError("VectorFile slices must be contiguous (step 1)")
            return self._read(start, stop)
        idx = np.asarray(key, dtype=np.int64)
        if idx.ndim != 1:
            raise ValueError("index a VectorFile with a slice or a 1-d array of positions")
        if idx.size and (idx.min() < -len(self) or idx.max() >= len(self)):
            raise IndexError(f"position out of range [0, {len(self)})")
        idx = np.where(idx < 0, idx + len(self), idx)
        out = np.empty((idx.size, self.shape[1]), dtype=self.dtype)
        for j, i in enumerate(idx):
            out[j] = self._read(int(i), int(i) + 1)[0]
        return out

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a VectorFile is not loaded whole: index it by slices or positions")


def save_vectors(path: str | os.PathLike, vectors, *, block: int = 65536) -> None:
    """Write (rows x dim) vectors to a ``.npy`` file block by block (``vectors`` may itself be on disk)."""
    n, dim = len(vectors), (vectors.shape[1] if len(vectors.shape) > 1 else 0)
    dtype = np.dtype(getattr(vectors, "dtype", np.float32))
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (n, dim)})
        for start in range(0, n, block):
            f.write(np.ascontiguousarray(rows_of(vectors, slice(start, start + block)), dtype=dtype).tobytes())


def rows_of(vectors, cols) -> np.ndarray:
    """Rows ``cols`` (a slice or positions) of an array, a memory map or a :class:`VectorFile`."""
    return vectors[cols]
