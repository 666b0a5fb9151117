"""fathom.testing: real test doubles (a scripted OpenAI-compatible server, fake vectors)."""

from fathom.testing.fake_vectors import hash_embedding, overlap_score
from fathom.testing.scripted_openai import RecordedRequest, ScriptedOpenAIServer
from fathom.testing.scripted_turns import ScriptedToolCall, Turn, error_turn, text_turn, tool_call_turn

__all__ = [
    "RecordedRequest",
    "ScriptedOpenAIServer",
    "ScriptedToolCall",
    "Turn",
    "error_turn",
    "hash_embedding",
    "overlap_score",
    "text_turn",
    "tool_call_turn",
]
