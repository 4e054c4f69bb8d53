"""Language models behind one small protocol (:class:`ChatModel`), with backends and wrappers.

>>> from fairarena.llm import build_model
>>> m = build_model("scripted:echo")
>>> m.chat([{"role": "user", "content": "hi"}]).text
'hi'
"""

from fairarena.llm.base import (
    BudgetExceededError, CacheMissError, ChatModel, ChatParams, ChatResponse, LLMError, Message,
    ServerUnavailableError, TransientLLMError, Usage,
)
from fairarena.llm.scripted import ScriptedChatModel, register_script, scripts
from fairarena.llm.spec import ModelSpec, backends, build_model, parse_model_spec, register_backend
from fairarena.llm.wrappers import (
    BudgetedModel, CachedModel, ResponseCache, RetriesExhaustedError, RetryingModel, UsageMeter, cache_key,
)

__all__ = [
    "BudgetExceededError", "BudgetedModel", "CacheMissError", "CachedModel", "ChatModel", "ChatParams",
    "ChatResponse", "LLMError", "Message", "ModelSpec", "ResponseCache", "RetriesExhaustedError",
    "RetryingModel", "ScriptedChatModel", "ServerUnavailableError", "TransientLLMError", "Usage",
    "UsageMeter", "backends", "build_model", "cache_key", "parse_model_spec", "register_backend",
    "register_script", "scripts",
]
