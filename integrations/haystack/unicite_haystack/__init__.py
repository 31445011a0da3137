"""unicite for Haystack."""
