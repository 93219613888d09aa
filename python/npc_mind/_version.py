"""The one version number: the package, the addon's plugin.cfg and the save formats follow it."""

__version__ = "0.1.0"
