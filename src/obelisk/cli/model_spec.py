"""``--model SPEC``: the model ``obelisk loop`` and ``obelisk run`` talk to
(docs/cli.md): ``openai:MODEL``, ``anthropic:MODEL``, ``litellm:MODEL`` (each adapter of
:mod:`obelisk.models`, its SDK imported only now) or ``scripted:FILE`` (a JSON-lines
transcript replayed by :class:`~obelisk.models.ScriptedModel`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from obelisk.cli.io import fail
from obelisk.errors import ObeliskError

if TYPE_CHECKING:
    from obelisk.interpreter.loop.model import Model

__all__ = ["model_from_spec"]

_MODEL_FORMS = "openai:MODEL, anthropic:MODEL, litellm:MODEL or scripted:FILE"
_PROVIDERS = {  # --model KIND:MODEL → the adapter of obelisk.models (docs/loop.md, "Providers")
    "openai": "OpenAIChatModel",
    "anthropic": "AnthropicModel",
    "litellm": "LiteLLMModel",
}


def model_from_spec(
    spec: str, base_url: str | None, options: dict[str, Any] | None = None
) -> Model:
    """The model ``--model SPEC`` names (``openai:MODEL``, ``anthropic:MODEL``,
    ``litellm:MODEL``, ``scripted:FILE``), as ``obelisk loop`` and ``obelisk run`` take
    it; exits 2 for a bad spec, a missing extra, a transcript that cannot be read, or
    ``--base-url`` with a scripted model.  ``options``: more keywords of the adapter
    (``structured``, openai: only; ``protocol``, ``"json"`` or ``"tools"``, openai: and
    litellm: only; ``temperature``, ``max_tokens``, ``timeout``), those
    that are not ``None``; a scripted model takes only ``timeout``."""
    given = {name: value for name, value in (options or {}).items() if value is not None}
    kind, _, target = spec.partition(":")
    if kind not in (*_PROVIDERS, "scripted") or not target:
        fail(f"--model must be {_MODEL_FORMS}, got {spec!r}")
    _check_protocol(kind, given.get("protocol"))
    if kind == "scripted":
        return _scripted(target, base_url, given)
    if kind != "openai" and "structured" in given:
        fail("--json-mode applies to openai: models only")
    import obelisk.models

    try:
        adapter = getattr(obelisk.models, _PROVIDERS[kind])
    except ImportError as exc:  # MissingDependencyError names the extra to install
        fail(f"--model {kind}:...: {exc}")
    try:
        return adapter(target, base_url=base_url, **given)  # type: ignore[no-any-return]
    except ObeliskError as exc:
        fail(str(exc))


def _check_protocol(kind: str, protocol: str | None) -> None:
    """``--protocol``: ``json`` or ``tools``, for the adapters that speak both (an
    anthropic: model always answers with tool use)."""
    if protocol is None:
        return
    if protocol not in ("json", "tools"):
        fail(f"--protocol must be json or tools, got {protocol!r}")
    if kind not in ("openai", "litellm"):
        fail("--protocol applies to openai: and litellm: models only")


def _scripted(target: str, base_url: str | None, given: dict[str, Any]) -> Model:
    """The transcript ``scripted:FILE`` replays; it takes no server settings."""
    from obelisk.models.scripted import ScriptedModel

    if base_url is not None:
        fail("--base-url applies to openai:, anthropic: and litellm: models only")
    if given.keys() - {"timeout"}:
        fail(
            "--json-mode, --temperature and --max-tokens apply to openai:, anthropic:"
            " and litellm: models only"
        )
    try:
        return ScriptedModel.from_jsonl(target)
    except OSError as exc:
        fail(f"cannot read transcript {target!r}: {exc.strerror or exc}")
    except ObeliskError as exc:
        fail(str(exc))
