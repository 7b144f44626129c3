"""The version of fesub, in a module of its own: the modules that stamp it on what they write
(:mod:`fesub.io`, the sweep stores, the reduction cache's key) read it here, below the package's
front door that imports them."""

__version__ = "0.1.0"
