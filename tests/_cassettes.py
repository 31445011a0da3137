"""The project's reviewable cassette format, registered with vcrpy by tests/conftest.py.

It lives in `unicite.testing`, where the examples use it too; this module keeps the name the
test configuration registers.
"""

from unicite.testing import KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS, deserialize, serialize

__all__ = ["KEEP_REQUEST_HEADERS", "KEEP_RESPONSE_HEADERS", "deserialize", "serialize"]
