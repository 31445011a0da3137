"""Citation options in LangChain terms, translated into the `unicite.CitePolicy` they mean.

Every entry point (the handler, `with_citations`, the output parser) takes a ``policy`` and
`CitePolicy` field names as keywords. The one LangChain convenience is the model itself as
``attribute=`` (or ``llm=``): a chat model or any runnable becomes a ``str -> reply`` callable
that asks it outside the cited run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.runnables import Runnable

from unicite import CitePolicy, Scorer, UsageError, resolve_enabled

__all__ = ["citation_policy"]


def _asker(model: Any) -> Callable[[str], Any]:
    """A ``str -> reply`` callable asking `model`; a runnable is asked without callbacks."""
    if isinstance(model, Runnable):
        runnable = model

        def ask(prompt: str) -> Any:
            # The attribution call must not become part of the run being cited.
            return runnable.invoke(prompt, config={"callbacks": []})

        return ask
    if callable(model):
        return model  # type: ignore[no-any-return]
    raise UsageError(
        f"llm must be a chat model, a runnable or a callable, got {type(model).__name__}"
    )


def citation_policy(
    policy: CitePolicy | None,
    options: Mapping[str, Any],
    *,
    persistent: bool | None = None,
) -> CitePolicy:
    """`policy` (default ``CitePolicy()``) with `options` applied, LangChain values translated.

    ``enabled`` follows `unicite.resolve_enabled`: an explicit ``enabled=`` (or a policy
    turned off) wins over ``persistent``, which wins over on.

    Raises:
        UsageError: ``policy`` is not a `CitePolicy`, an option is unknown or invalid.
    """
    if policy is not None and not isinstance(policy, CitePolicy):
        raise UsageError(f"policy must be a unicite.CitePolicy, got {type(policy).__name__}")
    base = policy if policy is not None else CitePolicy()
    changes = dict(options)
    explicit = changes.pop("enabled", None)
    if explicit is None and policy is not None and not policy.enabled:
        explicit = False
    if explicit is not None and not isinstance(explicit, bool):
        raise UsageError(f"enabled must be a bool or None, got {explicit!r}")
    if persistent is not None and not isinstance(persistent, bool):
        raise UsageError(f"persistent must be a bool or None, got {persistent!r}")
    changes["enabled"] = resolve_enabled(explicit, persistent, default=True)
    if changes.get("llm") is not None:
        changes["llm"] = _asker(changes["llm"])
    attribute = changes.get("attribute")
    if attribute is not None and not isinstance(attribute, (str, Scorer)):
        if not (isinstance(attribute, Runnable) or callable(attribute)):
            raise UsageError(
                "attribute must be 'lexical', 'llm', a Scorer, a chat model or a callable, "
                f"got {type(attribute).__name__}"
            )
        changes["attribute"] = "llm"
        changes["llm"] = _asker(attribute)
    if changes.get("attribute", base.attribute) == "llm" and changes.get("llm", base.llm) is None:
        raise UsageError(
            "attribute='llm' needs a model: pass llm= (a chat model or a str -> reply "
            "callable), or the model itself as attribute="
        )
    return base.replace(**changes)
