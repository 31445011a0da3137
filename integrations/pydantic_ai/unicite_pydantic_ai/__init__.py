"""unicite for pydantic-ai."""
