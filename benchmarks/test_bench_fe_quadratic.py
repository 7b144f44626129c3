"""Assembly of K and M on quadratic meshes against Q4 at the same DOFs.

A 200 x 50 mesh of Q9 (or of 2 x 200 x 50 T6) cells has the nodes of the 400 x 100 Q4 mesh
(81 002 DOFs); the Q8 mesh has the corner and mid-edge nodes only (61 002 DOFs). The baseline, timed
in the same run, is the compiled Q4 path on the 400 x 100 mesh. The quadratic cells are NumPy
(batched products over elements); their element matrices are larger (18 x 18 for Q9 against 8 x 8)
and couple more nodes, so a ratio ``Q4 time / quadratic time`` of about 1/3 is the goal: at equal
DOFs they are 20 to 1000 times more accurate on the bending test of tests/test_fe_quadratic.py.
"""

from __future__ import annotations

import pytest

from fesub.fe import PlaneStrain, mesh_matrices, rectangle

MAT = PlaneStrain(210e9, 0.3, 7800.0, 0.01)


@pytest.fixture(scope="module")
def q4_mesh():
    return rectangle(4.0, 1.0, 400, 100)


@pytest.mark.parametrize("kind", ["quad8", "quad9", "triangle6"])
def test_bench_quadratic_assembly(benchmark, ratio_to, goal, q4_mesh, kind):
    mesh = rectangle(4.0, 1.0, 200, 50, element=kind)
    K, M, dm = benchmark.pedantic(mesh_matrices, args=(mesh, MAT), rounds=3, iterations=1, warmup_rounds=1)
    assert K.shape == (dm.n_dofs, dm.n_dofs) and M.nnz == K.nnz
    benchmark.extra_info["n_elements"] = int(sum(len(c) for c in mesh.blocks().values()))
    benchmark.extra_info["n_dofs"] = dm.n_dofs
    r = ratio_to("compiled_q4_400x100", mesh_matrices, q4_mesh, MAT, rounds=3)
    if r is not None:
        goal("ratio_compiled_q4_400x100", 1 / 3, value=r, higher=True)
    goal("median_s", 1.0)
