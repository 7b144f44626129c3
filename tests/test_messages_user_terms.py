"""Error messages name what a user knows: node sets, node numbers, coordinates, and the fix."""

import re

import numpy as np
import pytest

from fesub.contact import Body
from fesub.errors import ModelError
from fesub.fe import PlaneStress, rectangle
from fesub.substructure import CraigBampton, Substructure

ALU = PlaneStress(E=70e9, nu=0.33, rho=2700.0, thickness=0.005)


def _plate():
    mesh = rectangle(0.200, 0.020, 20, 2)
    return mesh, Substructure(mesh, ALU, clamped=["left"], name="plate")


def test_clamped_corner_in_a_boundary_set_is_named_with_its_set_coordinates_and_the_fix():
    mesh, plate = _plate()
    corner = int(mesh.node("top_left"))
    with pytest.raises(ModelError) as err:
        CraigBampton(plate, None, plate.dofs("top"), 4)
    msg = str(err.value)
    assert f"node {corner} ('top_left') at (0, 0.02) m, x/y" in msg
    assert "node set 'top' includes clamped DOFs (clamped by 'left')" in msg
    assert "np.setdiff1d(mesh.nodes('top'), mesh.nodes('left'))" in msg
    assert not re.search(r"DOFs \[\d+", msg)             # no internal DOF numbers
    # the fix given works
    fixed = np.setdiff1d(mesh.nodes("top"), mesh.nodes("left"))
    assert CraigBampton(plate, None, plate.dofs(fixed), 4).n_dofs == 4 + 2 * fixed.size


def test_clamped_nodes_given_by_number_are_named_with_their_coordinates():
    mesh, plate = _plate()
    with pytest.raises(ModelError, match=r"the nodes given include clamped DOFs \(clamped by 'left'\): "
                                         r"node 0 \('bottom_left'\) at \(0, 0\) m, x\. .*leave them out"):
        plate.dofs([0, 5], "x")


def test_interior_dof_of_a_reduction_is_named_by_node_and_coordinates():
    mesh, plate = _plate()
    top = np.setdiff1d(mesh.nodes("top"), mesh.nodes("left"))
    cb = CraigBampton(plate, None, plate.dofs(top), 4)
    right = int(mesh.node("bottom_right"))
    d = int(plate.dofs([right], "y")[0])
    with pytest.raises(ModelError, match=rf"model DOF {d} \(node {right} at \(0\.2, 0\) m, y\) of 'plate' is not a "
                                         r"boundary DOF of the Craig-Bampton reduction: keep it physical"):
        Body.from_craig_bampton(cb, loads={d: 1.0})


def test_interior_node_of_a_reduction_in_a_contact_is_named_with_its_coordinates_and_the_fix():
    from fesub.contact import ContactInterface, MultibodyModel

    mesh, plate = _plate()
    top = np.setdiff1d(mesh.nodes("top"), mesh.nodes("left"))
    cb = CraigBampton(plate, None, plate.dofs(top), 4)
    body = Body.from_craig_bampton(cb, name="plate")
    other = Body(np.eye(2), np.eye(2), [[0.05, 0.03]], [[0, 1]], name="dot")
    inner = int(mesh.node("bottom_right"))          # not a boundary node of the reduction
    with pytest.raises(ModelError, match=rf"body 'plate': nodes without an x/y coordinate in the model \(node {inner} at \(0\.2, 0\) m\).*"
                                         r"keep the x and y DOFs of these nodes as boundary DOFs"):
        MultibodyModel([body, other], [ContactInterface("dot", [0], "plate", [[inner, top[-1]]])])
