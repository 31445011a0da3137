"""LlamaIndex adapter for unicite."""

from importlib.metadata import version as _version

__version__ = _version("unicite-llamaindex")

__all__ = ["__version__"]
