"""Prompt-side context budgeting: keep every prompt within the model's context window.

When a model declares a context window (:func:`fairarena.llm.base.max_prompt_tokens`; the scripted
negotiator declares none), the arena counts the prompt's tokens with the model's own counter
(:func:`fairarena.llm.base.count_tokens`: llama.cpp's tokenizer and chat template in-process, the
documented estimate of :func:`fairarena.llm.base.estimate_prompt_tokens` otherwise) and, while it is
over budget, shortens it in this order:

1. shorter history excerpts (justification and critique cut to 120, then 40 characters);
2. fewer quoted reference chunks (the lowest-ranked dropped first, down to none);
3. a summary of older rounds: every proposal before the latest round becomes one count line per
   participant; the latest round, the finals and the closing turns stay in full.

What was done is recorded in the turn (``budget``: tokens before and after, the limit, the excerpt
length, the number of chunks kept, the rounds summarised). A prompt still too long after all three
goes to the model as it is; the backend refuses it with a one-line context error and the debate
ends ``failed`` with that reason (never a silent cut of the instance or the instructions).
"""

from __future__ import annotations

from typing import Any

EXCERPTS = (120, 40)


def _summary(debate: Any, older: list[tuple[int, str, str, Any]]) -> str:
    rounds = sorted({t for t, _, _, _ in older})
    parts = []
    for name in debate.names:
        mine = [s for _, _, who, s in older if who == name]
        if mine:
            parts.append(f"agent {name} made {len(mine)} proposal(s), {sum(s.proposal.valid for s in mine)} valid")
    span = f"{rounds[0]}-{rounds[-1]}" if len(rounds) > 1 else f"{rounds[0]}"
    return f"- rounds {span} (summarised to fit the model's context): " + "; ".join(parts)


def fit_prompt(debate: Any, agent: Any, phase: str, t: int, refs: list[Any], extra: str
               ) -> tuple[list[dict[str, str]], dict[str, Any] | None]:
    from fairarena.llm.base import count_tokens, max_prompt_tokens

    msgs = debate.messages(agent, phase, t, refs, extra)
    limit = max_prompt_tokens(agent.model, debate.config.max_tokens)
    if limit is None:
        return msgs, None
    before = n = count_tokens(agent.model, msgs)
    if n <= limit:
        return msgs, None
    chars, k, history, summary, summarised = debate.config.history_chars, len(refs), debate.history, None, []

    def build() -> list[dict[str, str]]:
        return debate.messages(agent, phase, t, refs[:k], extra, history_chars=chars, summary=summary, history=history)

    for chars in EXCERPTS:
        msgs = build()
        n = count_tokens(agent.model, msgs)
        if n <= limit:
            break
    while n > limit and k > 0:
        k -= 1
        msgs = build()
        n = count_tokens(agent.model, msgs)
    if n > limit:
        latest = max((tt for tt, ph, _, _ in debate.history if ph == "round"), default=0)
        older = [h for h in debate.history if h[1] == "round" and h[0] < latest]
        if older:
            summarised = sorted({h[0] for h in older})
            history = [h for h in debate.history if not (h[1] == "round" and h[0] < latest)]
            summary = _summary(debate, older)
            msgs = build()
            n = count_tokens(agent.model, msgs)
    return msgs, {"prompt_tokens_before": before, "prompt_tokens": n, "limit": limit, "history_chars": chars,
                  "references": k, "summarised_rounds": summarised, "fits": n <= limit}
