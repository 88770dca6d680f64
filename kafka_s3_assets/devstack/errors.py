"""Errors the devstack raises to its callers (the CLI prints them as they are)."""

from __future__ import annotations


class DevstackError(RuntimeError):
    """The stack cannot be brought into the requested state; the message says why."""


class ServerStartError(DevstackError):
    """A server did not come up; the message names it and points at its log."""


class DevstackExtraMissing(DevstackError):
    """A package of the ``[devstack]`` extra is not installed; the message says how to install it."""
