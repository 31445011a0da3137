"""A vcrpy serializer keeping cassettes reviewable: plain YAML, JSON bodies as data, no secrets.

Bodies with a JSON content type are stored parsed (``parsed_body``) so a reviewer reads exactly
which citations the provider returned; server-sent-event bodies are stored as literal text
blocks. Only the headers a replay needs survive; keys, cookies, organisation/project ids and
tracking headers never reach the file.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

KEEP_REQUEST_HEADERS = {"content-type"}
KEEP_RESPONSE_HEADERS = {"content-type"}


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_representer)


def _headers(headers: dict[str, Any], keep: set[str]) -> dict[str, Any]:
    return {k: v for k, v in headers.items() if k.lower() in keep}


def _is_json(headers: dict[str, Any]) -> bool:
    for key, value in headers.items():
        if key.lower() == "content-type":
            values = value if isinstance(value, list) else [value]
            return any("json" in str(v) for v in values)
    return False


def _body_text(body: Any) -> str | None:
    if isinstance(body, dict):
        body = body.get("string")
    if isinstance(body, bytes):
        return body.decode("utf-8")
    return body if isinstance(body, str) else None


def serialize(cassette: dict[str, Any]) -> str:
    interactions = []
    for item in cassette["interactions"]:
        request, response = dict(item["request"]), dict(item["response"])
        request["headers"] = _headers(request.get("headers") or {}, KEEP_REQUEST_HEADERS)
        response["headers"] = _headers(response.get("headers") or {}, KEEP_RESPONSE_HEADERS)
        for part in (request, response):
            text = _body_text(part.pop("body", None))
            if text and _is_json(part["headers"]):
                try:
                    part["parsed_body"] = json.loads(text)
                    continue
                except ValueError:
                    pass
            part["body"] = text
        interactions.append({"request": request, "response": response})
    data = {"interactions": interactions, "version": cassette.get("version", 1)}
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)


def deserialize(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    for item in data["interactions"]:
        request, response = item["request"], item["response"]
        for part in (request, response):
            if "parsed_body" in part:
                body = json.dumps(part.pop("parsed_body"), ensure_ascii=False)
            else:
                body = part.pop("body", None)
            if part is response:
                part["body"] = {"string": body or ""}
            else:
                part["body"] = body
        response.setdefault("status", {"code": 200, "message": "OK"})
        request.setdefault("headers", {})
        response["headers"] = {
            k: v if isinstance(v, list) else [v] for k, v in response["headers"].items()
        }
    return data
