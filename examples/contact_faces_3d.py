"""Master faces in 3D: closest points on curved faces, ridges and valleys
=======================================================================

A :class:`fesub.contact.FaceSet` holds the master faces of a 3D contact surface, checked once
and entered in a hashed grid; each query returns the closest point of the surface, its signed
gap and the local frame (normal, two tangents).

Left: a slave node moving at a fixed height over a ridge (a roof of two quad4 faces, slopes
+-0.5) and over a valley (the same, upside down). Over the ridge the closest point stays on the
ridge line for a while: the gap is the distance to that line and the normal turns smoothly from
one face's normal to the other's; over the valley the nearer face holds the node and the normal
jumps where both are as near. The gap, a distance, is continuous in both (the dashed lines:
the closed-form distance to the nearer rectangle).

Right: a cylinder of radius 0.5 m meshed with quad8 faces (all nodes on the cylinder), 40
slave points within 5 cm of it: the largest difference between the gap and the exact distance
to the cylinder against the faces' angular size. It falls as h^4 here (the quadratic faces'
interpolation error; at least h^3 in general).

    python examples/contact_faces_3d.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact import FaceSet
from fesub.plots import style

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/contact_faces_3d")
out.mkdir(parents=True, exist_ok=True)


def roof(slope):
    """Two 2 m x 1 m rectangles meeting on the line x = 0 at z = 0, z = -slope |x|."""
    X = np.array([[-1, -1, -slope], [0, -1, 0], [1, -1, -slope], [-1, 1, -slope], [0, 1, 0],
                  [1, 1, -slope]], float)
    return X, np.array([[0, 1, 4, 3], [1, 2, 5, 4]])


def rectangle_distance(p, c0, c1, c3):
    """Distance from the points p to the rectangle with corners c0, c1, c3 (and c1 + c3 - c0)."""
    e1, e2 = c1 - c0, c3 - c0
    u = np.clip((p - c0) @ e1 / (e1 @ e1), 0, 1)
    v = np.clip((p - c0) @ e2 / (e2 @ e2), 0, 1)
    return np.linalg.norm(p - (c0 + u[:, None] * e1 + v[:, None] * e2), axis=1)


s = np.linspace(-0.8, 0.8, 401)
crossings = {}
for name, slope, height in (("ridge", 0.5, 0.3), ("valley", -0.5, 0.5)):
    X, F = roof(slope)
    path = np.c_[s, np.full_like(s, 0.2), np.full_like(s, height)]
    pr = FaceSet(X, F, "quad4", reach=2.0).project(path)
    # closed form: the distance to the nearer rectangle, positive above the surface
    exact = np.minimum(*(rectangle_distance(path, X[f[0]], X[f[1]], X[f[3]]) for f in F))
    exact *= np.sign(height + slope * np.abs(s))
    crossings[name] = (pr, exact)
    print(f"{name}: largest |gap - closed form| {np.abs(pr.gap - exact).max():.1e} m, "
          f"features met {sorted(set(pr.feature.tolist()))} (0 face, 1 edge)")


def cylinder(n_around, R=0.5, L=1.0, n_along=2):
    """quad8 faces of x^2 + y^2 = R^2, 0 <= z <= L, all nodes on the cylinder, normals out."""
    th = np.linspace(0, 2 * np.pi, 2 * n_around + 1)[:-1]
    z = np.linspace(0, L, 2 * n_along + 1)
    TH, Z = np.meshgrid(th, z, indexing="ij")
    X = np.c_[R * np.cos(TH.ravel()), R * np.sin(TH.ravel()), Z.ravel()]

    def k(i, j):
        return (i % (2 * n_around)) * len(z) + j

    F = [[k(i, j), k(i + 2, j), k(i + 2, j + 2), k(i, j + 2), k(i + 1, j), k(i + 2, j + 1),
          k(i + 1, j + 2), k(i, j + 1)] for i in range(0, 2 * n_around, 2)
         for j in range(0, 2 * n_along, 2)]
    return X, np.array(F)


rng = np.random.default_rng(0)
th, z, r = rng.uniform(0, 2 * np.pi, 40), rng.uniform(0.1, 0.9, 40), rng.uniform(0.45, 0.55, 40)
P = np.c_[r * np.cos(th), r * np.sin(th), z]
counts = np.array([4, 8, 16, 32, 64])
errors = []
for n in counts:
    pr = FaceSet(*cylinder(n), "quad8", reach=0.3).project(P)
    errors.append(np.abs(pr.gap - (r - 0.5)).max())
errors = np.array(errors)
rates = np.log2(errors[:-1] / errors[1:])
print("cylinder, quad8: largest |gap - exact| per refinement:",
      ", ".join(f"{e:.2e} m" for e in errors), "; orders", np.round(rates, 2))

plt = style.pyplot()
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9.5, 3.8))
for name, (pr, exact) in crossings.items():
    ax0.plot(s, pr.gap, label=f"gap over the {name}")
    ax0.plot(s, exact, "k--", lw=0.8)
    turn = np.degrees(np.arctan2(pr.normal[:, 0], pr.normal[:, 2]))
    ax0.plot(s, turn / 100.0, ":", label=f"normal's tilt / 100 deg ({name})")
ax0.set_xlabel("slave position across the edge x [m]")
ax0.set_ylabel("gap [m]; tilt / 100 [deg]")
ax0.set_title("Crossing a ridge and a valley")
ax0.legend(fontsize=6, loc="lower center", ncol=2)
size = 2 * np.pi * 0.5 / counts
ax1.loglog(size, errors, "o-", label="quad8 cylinder")
ax1.loglog(size, errors[0] * (size / size[0]) ** 3, "k:", label="slope 3")
ax1.set_xlabel("face size around the cylinder [m]")
ax1.set_ylabel("largest |gap - exact distance| [m]")
ax1.set_title("Curved faces: the gap converges")
ax1.xaxis.set_minor_formatter(plt.NullFormatter())
ax1.legend(fontsize=8)
fig.tight_layout()
style.save(fig, out / "contact_faces_3d.png")
