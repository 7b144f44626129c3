"""``fesub config``: which backend is active and why."""

from __future__ import annotations


def add_arguments(parser) -> None:
    """No options."""


def run(args) -> int:
    from .. import show_config

    show_config()
    return 0
