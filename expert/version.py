"""The version of the package (as pyproject.toml declares it; the package root and `expert mcp` name it)."""

__version__ = "0.1.0"
