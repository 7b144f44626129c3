"""Craig-Bampton reductions of several parts in parallel and from the cache (reduction.py).

The reference is a direct :class:`CraigBampton` reduction of each part: the pool's, the
cluster-free serial path's and the cache's models must equal it (bit for bit: the same code on
the same inputs), and the cache must be keyed by every input."""

import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from fesub.errors import ModelError
from fesub.fe import Solid
from fesub.io import load
from fesub.substructure import CraigBampton, read_volumes
from fesub.substructure.reduction import PartSpec, ReducedPart, part_key, reduce_part, reduce_parts

MESH = Path(__file__).resolve().parents[1] / "meshes" / "brake.msh"


@pytest.fixture(scope="module")
def pads():
    _, v = read_volumes(MESH)
    mat = Solid(200e9, 0.3, 7800.0)
    return [PartSpec("pad_top", v["pad_top"], mat, ("pad_top_contact", "pad_top_back"), 8, rayleigh=(0.0, 1e-7)),
            PartSpec("pad_bottom", v["pad_bottom"], mat, ("pad_bottom_contact", "pad_bottom_back"), 8,
                     rayleigh=(0.0, 1e-7))]


def _direct(spec):
    sub = spec.substructure()
    return CraigBampton(sub, boundary=spec.boundary_dofs(sub), n_modes=spec.n_modes, jobs=1)


def test_parallel_and_cached_reductions_equal_the_direct_one(pads, tmp_path):
    ref = {s.name: _direct(s) for s in pads}
    first, info = reduce_parts(pads, jobs=2, cache=tmp_path)
    assert sorted(info["reduced"]) == ["pad_bottom", "pad_top"] and info["cached"] == []
    again, info2 = reduce_parts(pads, jobs=1, cache=tmp_path)
    assert info2["reduced"] == [] and info2["cached"] == ["pad_top", "pad_bottom"]
    for name, cb in ref.items():
        for got in (first[name], again[name]):
            assert np.array_equal(got.Kr, cb.Kr) and np.array_equal(got.Mr, cb.Mr)
            assert np.array_equal(got.T, cb.T) and np.array_equal(got.boundary, cb.boundary)
            assert np.array_equal(got.rayleigh(0.0, 1e-7), cb.rayleigh(0.0, 1e-7))
            for what in ("K", "M", "C"):                 # the substructure's matrices, entry for entry
                a, b = getattr(got.substructure, what), getattr(cb.substructure, what)
                assert (a != b).nnz == 0 and np.array_equal(a.indptr, b.indptr)
            u = np.linspace(-1, 1, cb.n_dofs)
            # the direct model recovers by its implicit blocks, the stored one by the dense T:
            # the same sums in another order (round-off, 1e-13 of the field)
            w = cb.recover(u)
            assert np.abs(got.recover(u) - w).max() <= 1e-13 * np.abs(w).max()
    # a reduction is a fesub result: saved and reopened by fesub.load
    part = reduce_part(pads[0])
    stored = load(part.save(tmp_path / "pad_top"))
    assert isinstance(stored, ReducedPart) and stored.name == "pad_top" and np.array_equal(stored.T, part.T)
    assert stored.summary()["results"]["modes"]["value"] == 8


def test_the_key_changes_with_every_input(pads):
    s = pads[0]
    keys = {part_key(s), part_key(replace(s, n_modes=9)), part_key(replace(s, material=Solid(210e9, 0.3, 7800.0))),
            part_key(replace(s, rayleigh=(1.0, 1e-7))), part_key(replace(s, boundary=("pad_top_contact",))),
            part_key(replace(s, incompatible=False))}
    moved = replace(s.mesh)
    moved.points = s.mesh.points + [0.0, 0.0, 1e-9]
    keys.add(part_key(replace(s, mesh=moved)))
    assert len(keys) == 7
    assert part_key(s) == part_key(replace(s))                   # a copy: the same key


def test_a_damaged_or_stale_cache_file_is_recomputed(pads, tmp_path):
    ref, _ = reduce_parts(pads[:1], cache=False)
    reduce_parts(pads, cache=tmp_path)
    f = tmp_path / f"{part_key(pads[0])}.npz"
    good = f.read_bytes()
    other = (tmp_path / f"{part_key(pads[1])}.npz").read_bytes()
    i = good.index(b"\x93NUMPY", good.index(b"T.npy")) + 200     # a byte inside the stored T
    flipped = good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1:]
    for bad in (b"not a result", good[: len(good) // 2], flipped, other):
        f.write_bytes(bad)
        with pytest.warns(RuntimeWarning, match="reducing it again"):
            models, info = reduce_parts(pads[:1], cache=tmp_path)
        assert info["reduced"] == ["pad_top"] and np.array_equal(models["pad_top"].T, ref["pad_top"].T)
        with warnings.catch_warnings():                            # replaced by the right one
            warnings.simplefilter("error")
            again, info = reduce_parts(pads[:1], cache=tmp_path)
        assert info["cached"] == ["pad_top"] and np.array_equal(again["pad_top"].T, ref["pad_top"].T)


def test_bad_parts_are_refused(pads):
    with pytest.raises(ModelError, match="no node set"):
        replace(pads[0], boundary=("nowhere",))
    with pytest.raises(Exception, match="distinct"):
        reduce_parts([pads[0], pads[0]], cache=False)


def test_matrices_over_the_retained_dofs_are_taken_as_they_are(pads):
    """``Substructure.from_matrices(retained_only=True)`` (how the cache restores a part): the
    substructure of its own K and M is the part's, entry for entry; matrices of another size are
    refused by name."""
    from fesub.substructure import Substructure

    s = pads[0]
    sub = s.substructure()
    back = Substructure.from_matrices(s.mesh, s.material, sub.K, sub.M, sub.dofmap, clamped=s.clamped,
                                      rayleigh=(1.0, 1e-7), name=s.name, retained_only=True)
    assert np.array_equal(back.retained, sub.retained)
    assert (back.K != sub.K).nnz == 0 and (back.M != sub.M).nnz == 0
    assert (back.C != (1.0 * sub.M + 1e-7 * sub.K)).nnz == 0
    with pytest.raises(ModelError, match="over the retained DOFs"):
        Substructure.from_matrices(s.mesh, s.material, sub.K[:-1, :-1], sub.M[:-1, :-1], sub.dofmap,
                                   clamped=s.clamped, name=s.name, retained_only=True)
