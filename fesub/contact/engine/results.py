"""Result of a multibody contact run: :class:`ContactRunResult`.

Per output sample (time t_n of step n, decimated) and per slave node of every contact interface:
the normal and tangential contact forces of step n, the gap at t_{n+1} (after the step), the slip
velocity over the step and the state (open, stick, slip+, slip-); the body output channels; the
energy accounts. Saved and reopened exactly (netCDF through :mod:`fesub.io`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ParameterError
from ...io import Result, summary_record

__all__ = ["ContactRunResult", "STATES", "ENERGIES", "STATUSES", "NODE_KEYS_3D"]

#: state codes of a contact node after each step: 0 open (no normal force), 1 stick (the
#: tangential force inside the friction cone, no slip), 2 slip+ and 3 slip- (at the friction
#: limit, the slave sliding along +t / -t of its master segment, t running from the segment's
#: first node to its second)
STATES = {0: "open", 1: "stick", 2: "slip+", 3: "slip-"}
#: between solid bodies (node-to-surface): 2 is slip, along the slip velocity vector
STATES_3D = {0: "open", 1: "stick", 2: "slip"}
#: how a run ends
STATUSES = ("completed", "stick", "lift_off", "off_surface", "not_converged", "interrupted")
#: energy accounts (J), per output sample, summed over the bodies. A body with prescribed
#: coordinates is measured relative to its drive's quasi-static motion (its free coordinates where
#: the prescribed ones hold them at equilibrium: for a rigid drag, the rigid motion): its kinetic
#: energy is that of the motion relative to it, its strain energy that of its deformation.
ENERGIES = {
    "kinetic": "kinetic energy of the deformation (of the motion relative to the drives' quasi-static motion; "
               "of the whole motion for undriven bodies) at the half step t_n + h/2",
    "strain": "strain energy q'Kq/2 of the bodies at the mid-step displacement (t_n + h/2)",
    "damping_loss": "energy dissipated by viscous damping of the deformation since t = 0",
    "external_work": "work of the loads and of the prescribed motions on the deformation (directly, through the "
                     "inertia and damping of their motion, and through the contacts) since t = 0",
    "friction_dissipation": "energy dissipated by friction since t = 0",
    "impact_loss": "work of the normal contact forces, negated (energy lost in the inelastic impacts, and the O(h) work of the normal force along turning rows) since t = 0",
}
_NODE_VARS = {
    "lambda_n": ("N", "normal contact force on the slave (> 0 in compression; impulse of the step / h)"),
    "lambda_t": ("N", "tangential contact force on the slave along the master tangent (impulse / h)"),
    "gap": ("m", "normal gap after the step (> 0 open; NaN off the master surface)"),
    "slip_velocity": ("m/s", "tangential velocity of the slave relative to the master over the step"),
    "state": ("1", "state code: 0 open, 1 stick, 2 slip+, 3 slip-"),
    "segment": ("1", "master segment under the slave (index in its interface; -1 off the master surface)"),
    "contact_x": ("m", "contact point on the master, x (predicted positions of the step; NaN off the surface)"),
    "contact_y": ("m", "contact point on the master, y (predicted positions of the step; NaN off the surface)"),
    "force_x": ("N", "contact force on the slave, x"),
    "force_y": ("N", "contact force on the slave, y"),
}
_NODE_VARS.update({
    "lambda_t1": ("N", "tangential contact force on the slave along the first tangent t1 of its contact frame (3D)"),
    "lambda_t2": ("N", "tangential contact force on the slave along the second tangent t2 = n x t1 (3D)"),
    "slip_velocity_x": ("m/s", "slip velocity of the slave on the master over the step, x (3D)"),
    "slip_velocity_y": ("m/s", "slip velocity of the slave on the master over the step, y (3D)"),
    "slip_velocity_z": ("m/s", "slip velocity of the slave on the master over the step, z (3D)"),
    "face": ("1", "master face under the slave (index in its interface; -1 off the master surface) (3D)"),
    "contact_z": ("m", "contact point on the master, z (predicted positions of the step; NaN off the surface)"),
    "force_z": ("N", "contact force on the slave, z"),
})
#: the float node arrays of a run between solid bodies (with ``state`` and ``face``)
NODE_KEYS_3D = ("lambda_n", "lambda_t1", "lambda_t2", "gap", "slip_velocity_x", "slip_velocity_y",
                "slip_velocity_z", "contact_x", "contact_y", "contact_z", "force_x", "force_y", "force_z")
_CHANNEL_UNITS = {"u": "m", "v": "m/s", "a": "m/s^2"}
_CHANNEL_WHAT = {"u": "displacement", "v": "velocity", "a": "acceleration"}
_META = ("status", "steps", "h", "fs_out", "wall_time", "backend", "tol", "on_stick", "info")


@dataclass(eq=False)
class ContactRunResult(Result):
    """Per-node contact signals, body output channels and energies of a multibody contact run.

    Parameters
    ----------
    t : (k,) ndarray
        Sample times t_n (s).
    nodes : dict of (k, m) ndarray
        'lambda_n' (N), 'lambda_t' (N), 'gap' (m), 'slip_velocity' (m/s), 'state' (codes of
        :data:`STATES`), 'segment' (master segment, -1 off the surface), 'contact_x',
        'contact_y' (m, contact point on the master at the predicted positions of the step),
        'force_x', 'force_y' (N, contact force on the slave); column j is slave node
        ``node_id[j]`` of interface ``node_interface[j]``. :meth:`contact_forces` sums them
        over an interface (the friction and normal forces against time).
    channels : dict of (k,) ndarray
        'u_NAME' (m), 'v_NAME' (m/s), 'a_NAME' (m/s^2) of every body output channel (central
        velocity, acceleration as the second difference of the displacements).
    energies : dict of (k,) ndarray
        Energy accounts (J), see :data:`ENERGIES`: 'kinetic', 'strain' (at the sample), and
        since t = 0 'damping_loss', 'external_work', 'friction_dissipation', 'impact_loss';
        :meth:`energy_residual` is their balance (with ``info['kinetic_initial_J']`` and
        ``info['strain_initial_J']``).
    node_interface : (m,) int ndarray
        Interface index of each contact node (column).
    node_id : (m,) int ndarray
        Slave node number of each contact node in its body.
    state_changes : (m,) int ndarray
        Number of changes of state of each node over all steps (not samples).
    status : str
        'completed', 'stick', 'lift_off', 'off_surface' (a stop requested by ``on_stick='stop'``),
        'not_converged' (the kernel reached its sweep limit; the steps before are kept) or
        'interrupted' (Ctrl-C).
    steps : int
        Number of time steps computed.
    h : float
        Time step (s).
    fs_out : float
        Output sampling rate (Hz).
    wall_time : float
        Computing time of the run (s).
    backend : str
        'compiled' or 'python'.
    tol : float
        Kernel tolerance (m).
    on_stick : str
        'continue' or 'stop', as requested of the run.
    info : dict, optional
        The initial energies (J), the sweeps of the kernel, names of bodies and interfaces.
    """

    t: np.ndarray
    nodes: dict
    channels: dict
    energies: dict
    node_interface: np.ndarray
    node_id: np.ndarray
    state_changes: np.ndarray
    status: str
    steps: int
    h: float
    fs_out: float
    wall_time: float
    backend: str
    tol: float
    on_stick: str
    info: dict = field(default_factory=dict)

    kind = "multibody-contact"

    def contact_forces(self, interface=None) -> dict:
        """Total contact forces (N) on the slave nodes of an interface, per sample.

        Parameters
        ----------
        interface : int or str, optional
            Interface index or name (``info['interfaces']``); default all the interfaces.

        Returns
        -------
        dict of (k,) arrays, in N
            ``'normal'``: the sum of the normal multipliers ``lambda_n`` (> 0 in compression);
            ``'friction'``: the sum of the tangential multipliers ``lambda_t``, each along its
            node's master tangent (for a straight master edge, the friction force along it; its
            magnitude is ``mu`` times ``'normal'`` while every closed node slips);
            ``'x'``, ``'y'``: the sums of the contact forces on the slaves in the global axes
            (``force_x``, ``force_y``); between solid bodies ``'normal'`` and ``'x'``, ``'y'``,
            ``'z'`` (the tangents of the nodes' frames differ). On a master edge inclined to x the global sums mix the
            friction and the normal force: sum the multipliers for the friction law, the global
            components for the resultant a support or a load cell feels.
        """
        cols = np.ones(self.node_id.size, bool)
        if interface is not None:
            names = list(self.info.get("interfaces", []))
            if isinstance(interface, str):
                if interface not in names:
                    raise ParameterError(f"no interface {interface!r}; the run's interfaces are {names}")
                interface = names.index(interface)
            n_itf = int(self.node_interface.max(initial=-1)) + 1
            if not isinstance(interface, (int, np.integer)) or not 0 <= interface < max(n_itf, len(names)):
                raise ParameterError(f"interface must be a name in {names} or an index in "
                                     f"0..{max(n_itf, len(names)) - 1}, got {interface!r}")
            cols = self.node_interface == interface
        if "lambda_t1" in self.nodes:  # solid bodies: the global components (tangents turn)
            pick = {"normal": "lambda_n", "x": "force_x", "y": "force_y", "z": "force_z"}
        else:
            pick = {"normal": "lambda_n", "friction": "lambda_t", "x": "force_x", "y": "force_y"}
        return {k: np.nansum(self.nodes[v][:, cols], axis=1) for k, v in pick.items()}

    def energy_residual(self) -> np.ndarray:
        """External work minus the changes of kinetic and strain energy and the losses (J), per
        sample. For the central-difference step the exact balance holds with the strain energy
        ``1/2 q_n' K q_{n+1}``; with the mid-step strain energy reported here the residual is
        ``h^2/8 v' K v`` (v the half-step velocity): O(h^2). A run without the work accounts
        (``accounts=False``) has none: ParameterError."""
        e, i = self.energies, self.info
        if not i.get("accounts", True):
            raise ParameterError("this run kept no work accounts (simulate_multibody(..., accounts=False)): "
                                 "no energy balance")
        return (e["external_work"] - (e["kinetic"] - i["kinetic_initial_J"]) - (e["strain"] - i["strain_initial_J"])
                - e["damping_loss"] - e["friction_dissipation"] - e["impact_loss"])

    def summary(self) -> dict:
        st = self.nodes["state"]
        last = st[-1] if st.shape[0] else np.zeros(0)
        params = {"time_step": (self.h, "s"), "fs_out": (self.fs_out, "Hz"), "tol": (self.tol, "m"),
                  "on_stick": (self.on_stick, None), "nodes": (int(self.node_id.size), None)}
        results = {"status": (self.status, None), "steps": (self.steps, None),
                   "duration": (self.steps * self.h, "s"), "wall_time": (self.wall_time, "s"),
                   "state_changes": (int(self.state_changes.sum()), None),
                   "closed_at_end": (int(np.count_nonzero(last > 0)), None),
                   "max_lambda_n": (float(np.nanmax(self.nodes["lambda_n"], initial=0.0)), "N"),
                   "friction_dissipation": (float(self.energies["friction_dissipation"][-1])
                                            if self.t.size else 0.0, "J")}
        return summary_record(self.kind, params, results, details={"backend": self.backend, **self.info})

    def to_xarray(self):
        import xarray as xr

        data = {k: (("t", "node"), v, {"units": _NODE_VARS[k][0], "long_name": _NODE_VARS[k][1]})
                for k, v in self.nodes.items()}
        # the output channels as three (t, channel) arrays, u, v and a, with the channel names as
        # a coordinate: one variable per channel costs milliseconds each to write and read, and a
        # run that records a whole surface has hundreds of channels
        names = [k[2:] for k in self.channels if k.startswith("u_")]
        for p in "uva":
            block = (np.column_stack([self.channels[f"{p}_{n}"] for n in names]) if names
                     else np.zeros((self.t.size, 0)))
            data[f"channel_{p}"] = (("t", "channel"), block,
                                    {"units": _CHANNEL_UNITS[p], "long_name": f"output channels: {_CHANNEL_WHAT[p]}"})
        for k, v in self.energies.items():
            data[f"energy_{k}"] = ("t", v, {"units": "J", "long_name": ENERGIES[k]})
        data["node_interface"] = ("node", self.node_interface, {"units": "1", "long_name": "interface of the node"})
        data["node_id"] = ("node", self.node_id, {"units": "1", "long_name": "slave node index in its body"})
        data["state_changes"] = ("node", self.state_changes, {"units": "1", "long_name": "changes of state"})
        attrs = {k: getattr(self, k) for k in _META}
        coords = {"t": ("t", self.t, {"units": "s", "long_name": "time t_n"}),
                  "channel": ("channel", np.array(names, dtype=str), {"units": "1", "long_name": "output channel name"})}
        return xr.Dataset(data, coords=coords, attrs=attrs)

    @classmethod
    def from_xarray(cls, ds):
        a = dict(ds.attrs)
        nodes = {k: ds[k].values for k in _NODE_VARS if k in ds}
        if "channel_u" in ds:
            names = [str(n) for n in ds["channel"].values]
            blocks = {p: ds[f"channel_{p}"].values for p in "uva"}
            channels = {f"{p}_{n}": blocks[p][:, j].copy() for j, n in enumerate(names) for p in "uva"}
        else:  # files written with one variable per channel
            channels = {k: ds[k].values for k in a.pop("channel_order", None) or []}
        energies = {k: ds[f"energy_{k}"].values for k in ENERGIES}
        return cls(t=ds["t"].values, nodes=nodes, channels=channels, energies=energies,
                   node_interface=ds["node_interface"].values, node_id=ds["node_id"].values,
                   state_changes=ds["state_changes"].values, **{k: a[k] for k in _META})
