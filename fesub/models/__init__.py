"""Ready-made systems and the one registry of them.

========================  =========  ============================================================
name                      kind       builder
========================  =========  ============================================================
``jenkins_1dof``          hb         :func:`fesub.models.jenkins.jenkins_1dof`
``cantilever_contact``    hb         :func:`fesub.models.cantilever_contact.build`
``blade_damper_blade``    hb         :func:`fesub.models.blade_damper_blade.build`
``beam_on_beam``          contact    :func:`fesub.models.beam_on_beam.build`
``pad_on_beam``           contact    :func:`fesub.models.pad_on_beam.build` (``.model``: a
                                     :class:`fesub.contact.MultibodyModel`)
``pad_on_plate``          contact    :func:`fesub.models.pad_on_plate.build` (3D: a hexahedral
                                     pad on a rigid plate, node-to-surface contact)
``brake``                 contact    :func:`fesub.models.brake.build` (3D: a disc clamped at its
                                     hub, two pads pressed and driven around it; Craig-Bampton
                                     parts reduced in parallel and cached)
========================  =========  ============================================================

``hb`` builders return a harmonic-balance :class:`fesub.hbm.HBSystem`; ``contact`` builders
return a model of substructures in sliding contact (``beam_on_beam.contact_system(model)``
turns it into the system the contact transient marches; ``beam_on_beam.transient(model, ...)``
runs that transient on the general multibody stepper).

:func:`build` makes one by name with parameter overrides, :func:`parameters` lists what a builder
accepts; :mod:`fesub.models.common` holds what the models share (where their bundled meshes are,
their spectrum's description). Builders are named by ``"module:function"`` strings and imported on first use: importing
this package imports none of the analysis packages.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Callable

from ..errors import ParameterError

__all__ = ["KINDS", "MODELS", "ModelEntry", "build", "builder", "names", "parameters"]

#: what a builder returns, by kind
KINDS = {"hb": "harmonic-balance system (fesub.hbm.HBSystem)",
         "contact": "substructures in sliding contact (fesub.contact)"}


@dataclass(frozen=True)
class ModelEntry:
    """One ready-made system.

    Parameters
    ----------
    name : str
        Registry key.
    builder : str
        ``"module:function"`` of the function that builds it from keyword parameters.
    kind : str
        ``"hb"`` (harmonic-balance system) or ``"contact"`` (sliding-contact model), see
        :data:`KINDS`.
    description : str
        One line for listings.
    """

    name: str
    builder: str
    kind: str
    description: str

    def load(self) -> Callable:
        """The builder function (its module imported now)."""
        module, _, function = self.builder.partition(":")
        return getattr(importlib.import_module(module), function)


#: model name -> :class:`ModelEntry`
MODELS: dict[str, ModelEntry] = {e.name: e for e in (
    ModelEntry("jenkins_1dof", "fesub.models.jenkins:jenkins_1dof", "hb",
               "1-DOF oscillator with a grounded Jenkins friction element"),
    ModelEntry("cantilever_contact", "fesub.models.cantilever_contact:build", "hb",
               "clamped Euler-Bernoulli beam, 20 elements, friction pad at the tip"),
    ModelEntry("blade_damper_blade", "fesub.models.blade_damper_blade:build", "hb",
               "two blades coupled by an underplatform damper, two 2D stick-slip-separation "
               "contacts"),
    ModelEntry("beam_on_beam", "fesub.models.beam_on_beam:build", "contact",
               "inclined beam sliding with friction on a clamped beam (Craig-Bampton models)"),
    ModelEntry("pad_on_beam", "fesub.models.pad_on_beam:build", "contact",
               "elastic pad pressed and dragged on a clamped beam, 21 contact nodes (multibody contact)"),
    ModelEntry("pad_on_plate", "fesub.models.pad_on_plate:build", "contact",
               "hexahedral pad pressed and dragged on a rigid plate in 3D, 81 contact nodes (node-to-surface)"),
    ModelEntry("brake", "fesub.models.brake:build", "contact",
               "disc brake in 3D: a disc clamped at its hub, two pads pressed and driven around it, 56 contact nodes"),
)}


def names(kind: str | None = None) -> list[str]:
    """Sorted names of the registered models, of one ``kind`` (see :data:`KINDS`) or all.

    Parameters
    ----------
    kind : str, optional
        ``"hb"`` or ``"contact"``; None for all.

    Returns
    -------
    list of str
    """
    if kind is not None and kind not in KINDS:
        raise ParameterError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    return sorted(n for n, e in MODELS.items() if kind is None or e.kind == kind)


def _entry(model_name) -> ModelEntry:
    if model_name not in MODELS:
        raise ParameterError(f"model_name must be one of {sorted(MODELS)}, got {model_name!r}")
    return MODELS[model_name]


def builder(model_name: str) -> Callable:
    """The builder function of a registered model (ParameterError naming an unknown model).

    Parameters
    ----------
    model_name : str
        Registry key (see :func:`names`).

    Returns
    -------
    callable
        The builder, imported on first use.
    """
    return _entry(model_name).load()


def parameters(model_name: str) -> set[str] | None:
    """Names of the keyword parameters the builder of ``model_name`` accepts, from its signature;
    None when it takes ``**kwargs`` (the builder then checks the names itself).

    Parameters
    ----------
    model_name : str
        Registry key (see :func:`names`).

    Returns
    -------
    set of str or None
    """
    sig = inspect.signature(builder(model_name))
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return {n for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                                 p.KEYWORD_ONLY)}


def build(model_name: str, /, **params):
    """Build the registered model ``model_name`` with the builder's defaults overridden by
    ``params`` (keyword parameters of the builder, in its units).

    Parameters
    ----------
    model_name : str
        Registry key (see :func:`names`).
    **params
        Keyword parameters of the builder, each in the units of the builder's docstring (SI).

    Returns
    -------
    fesub.hbm.HBSystem or contact model
        What the builder returns (see :data:`KINDS`).

    Raises
    ------
    ParameterError
        ``model_name`` is not registered, or a parameter is not one the builder accepts.
    """
    allowed = parameters(model_name)
    if allowed is not None:
        bad = sorted(set(params) - allowed)
        if bad:
            raise ParameterError(f"unknown parameter(s) {bad} for model {model_name!r}; "
                                 f"allowed: {sorted(allowed)}")
    try:
        return builder(model_name)(**params)
    except TypeError as exc:
        raise ParameterError(f"bad parameters for model {model_name!r}: {exc}") from None
