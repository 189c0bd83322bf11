"""The version of webmem (one place: the package metadata is read from here)."""

__version__ = "0.2.0"
