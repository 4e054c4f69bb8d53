"""Language models behind one small protocol (:class:`ChatModel`), with backends and wrappers.

>>> from fairarena.llm import build_model
>>> m = build_model("scripted:echo")
>>> m.chat([{"role": "user", "content": "hi"}]).text
'hi'
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

# name -> module; imported on first use, so importing the package loads nothing heavy
_LAZY = {
    "BudgetExceededError": "fairarena.llm.base",
    "CacheMissError": "fairarena.llm.base",
    "ChatModel": "fairarena.llm.base",
    "ChatParams": "fairarena.llm.base",
    "ChatResponse": "fairarena.llm.base",
    "LLMError": "fairarena.llm.base",
    "Message": "fairarena.llm.base",
    "ServerUnavailableError": "fairarena.llm.base",
    "TransientLLMError": "fairarena.llm.base",
    "Usage": "fairarena.llm.base",
    "ContextOverflowError": "fairarena.llm.base",
    "MalformedResponseError": "fairarena.llm.base",
    "TruncatedResponseError": "fairarena.llm.base",
    "PromptTruncatedError": "fairarena.llm.base",
    "context_window": "fairarena.llm.base",
    "count_tokens": "fairarena.llm.base",
    "estimate_prompt_tokens": "fairarena.llm.base",
    "max_prompt_tokens": "fairarena.llm.base",
    "redact": "fairarena.llm.redaction",
    "redact_obj": "fairarena.llm.redaction",
    "register_secret": "fairarena.llm.redaction",
    "SCRIPTS": "fairarena.llm.scripted",
    "BACKENDS": "fairarena.llm.spec",
    "ScriptedChatModel": "fairarena.llm.scripted",
    "register_script": "fairarena.llm.scripted",
    "scripts": "fairarena.llm.scripted",
    "ModelSpec": "fairarena.llm.spec",
    "backends": "fairarena.llm.spec",
    "build_model": "fairarena.llm.spec",
    "parse_model_spec": "fairarena.llm.spec",
    "register_backend": "fairarena.llm.spec",
    "server_key": "fairarena.llm.spec",
    "BudgetedModel": "fairarena.llm.wrappers",
    "LimitedModel": "fairarena.llm.wrappers",
    "ServerLimit": "fairarena.llm.wrappers",
    "server_limit": "fairarena.llm.wrappers",
    "server_limits": "fairarena.llm.wrappers",
    "CachedModel": "fairarena.llm.wrappers",
    "ResponseCache": "fairarena.llm.wrappers",
    "RetriesExhaustedError": "fairarena.llm.wrappers",
    "RetryingModel": "fairarena.llm.wrappers",
    "UsageMeter": "fairarena.llm.wrappers",
    "cache_key": "fairarena.llm.wrappers",
}

__all__ = [
    "BACKENDS", "BudgetExceededError", "BudgetedModel", "CacheMissError", "CachedModel", "ChatModel", "ChatParams",
    "ChatResponse", "ContextOverflowError", "LLMError", "LimitedModel", "MalformedResponseError", "Message",
    "ModelSpec", "PromptTruncatedError", "ResponseCache", "RetriesExhaustedError", "RetryingModel", "SCRIPTS", "ScriptedChatModel",
    "ServerLimit", "ServerUnavailableError", "TransientLLMError", "TruncatedResponseError", "Usage", "UsageMeter",
    "backends", "build_model", "cache_key", "context_window", "count_tokens", "estimate_prompt_tokens",
    "max_prompt_tokens", "parse_model_spec", "redact", "redact_obj", "register_backend", "register_script",
    "register_secret", "scripts", "server_key", "server_limit", "server_limits",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
