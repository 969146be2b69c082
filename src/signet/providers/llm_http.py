"""The HTTP LLM providers: Ollama, any OpenAI-compatible server, and Anthropic.

`HTTPChatLLM` holds one POST with the error mapping (timeout: ProviderTimeout; no connection or
status >= 400: ProviderError; no JSON or no text: BadResponse); each provider is a request builder
plus a reply reader. Anthropic has no JSON switch, so JSON mode there is an instruction in the
system prompt.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import httpx

from signet.errors import BadResponse, InvalidInput, ProviderError, ProviderTimeout
from signet.providers.llm import (
    JSON_INSTRUCTION,
    BaseLLM,
    LLMSettings,
    RawCompletion,
)

__all__ = ["AnthropicLLM", "HTTPChatLLM", "OllamaLLM", "OpenAICompatLLM"]

ANTHROPIC_VERSION = "2023-06-01"


class HTTPChatLLM(BaseLLM):
    """One JSON POST per completion; subclasses say what to send and where the answer is."""

    path: ClassVar[str]
    default_base_url: ClassVar[str]

    def _model(self, settings: LLMSettings) -> str:
        if not settings.model:
            raise InvalidInput(f"llm provider {self.name} needs a model (llm.model)")
        return settings.model

    def _setup(self, settings: LLMSettings) -> None:
        self.url = _join(settings.base_url or self.default_base_url, self.path)
        self.timeout_ms = settings.timeout_ms
        self._client = httpx.Client(
            timeout=settings.timeout_ms / 1000.0, headers=self._headers(settings.api_key)
        )

    @property
    def target(self) -> str:
        return self.url

    def close(self) -> None:
        self._client.close()

    def _headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    @abstractmethod
    def _payload(
        self, prompt: str, *, system: str | None, json_mode: bool, max_tokens: int
    ) -> dict[str, Any]:
        """The request body for one completion."""

    @abstractmethod
    def _read(self, body: Any) -> RawCompletion:
        """Text and token counts from a parsed reply body."""

    def _complete(
        self, prompt: str, *, system: str | None, json_mode: bool, max_tokens: int
    ) -> RawCompletion:
        payload = self._payload(prompt, system=system, json_mode=json_mode, max_tokens=max_tokens)
        return self._read(self._post(payload))

    def _post(self, payload: dict[str, Any]) -> Any:
        try:
            response = self._client.post(self.url, json=payload)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(
                f"{self.name}: no reply from {self.url} within {self.timeout_ms} ms"
            ) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(
                f"{self.name}: cannot reach {self.url}: {type(exc).__name__}: {exc}"
            ) from exc
        if response.status_code >= 400:
            raise ProviderError(
                f"{self.name}: HTTP {response.status_code} from {self.url}: {_detail(response)}"
            )
        try:
            return response.json()
        except ValueError as exc:
            raise BadResponse(
                f"{self.name}: reply from {self.url} is not JSON "
                f"(HTTP {response.status_code}, starts {response.text[:80]!r})"
            ) from exc

    def _field(self, body: Any, *path: str | int) -> Any:
        """The value at `path` in a JSON reply, or BadResponse naming what is missing."""
        node = body
        for key in path:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                where = ".".join(str(k) for k in path)
                raise BadResponse(f"{self.name}: reply from {self.url} has no {where}") from None
        return node

    def _text(self, value: Any, where: str) -> str:
        if value is None:  # OpenAI sends null content for refusals and tool calls
            return ""
        if not isinstance(value, str):
            raise BadResponse(
                f"{self.name}: {where} in the reply from {self.url} is "
                f"{type(value).__name__}, not text"
            )
        return value


class ChatMessagesLLM(HTTPChatLLM):
    """A server taking the system prompt and the prompt as chat messages, unstreamed; each says
    how a reply's length is capped and how a JSON object is asked for."""

    json_format: ClassVar[dict[str, Any]]

    @abstractmethod
    def _limit(self, max_tokens: int) -> dict[str, Any]:
        """The body's fields capping the reply at `max_tokens`."""

    def _payload(
        self, prompt: str, *, system: str | None, json_mode: bool, max_tokens: int
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model, "messages": _chat_messages(prompt, system), "stream": False,
            **self._limit(max_tokens),
        }
        return {**payload, **self.json_format} if json_mode else payload


class OllamaLLM(ChatMessagesLLM):
    """Ollama's native chat API (POST /api/chat), non-streaming."""

    name = "ollama"
    path = "/api/chat"
    default_base_url = "http://127.0.0.1:11434"

    json_format: ClassVar[dict[str, Any]] = {"format": "json"}

    def _limit(self, max_tokens: int) -> dict[str, Any]:
        return {"options": {"num_predict": max_tokens}}

    def _read(self, body: Any) -> RawCompletion:
        text = self._text(self._field(body, "message", "content"), "message.content")
        return RawCompletion(text, _count(body, "prompt_eval_count"), _count(body, "eval_count"))


class OpenAICompatLLM(ChatMessagesLLM):
    """Any OpenAI-compatible chat completions server: llama.cpp, vLLM, LM Studio, OpenAI.

    `base_url` may be given with or without its trailing `/v1`, as the servers' docs vary.
    """

    name = "openai"
    path = "/v1/chat/completions"
    default_base_url = "https://api.openai.com"

    json_format: ClassVar[dict[str, Any]] = {"response_format": {"type": "json_object"}}

    def _limit(self, max_tokens: int) -> dict[str, Any]:
        return {"max_tokens": max_tokens}

    def _read(self, body: Any) -> RawCompletion:
        content = self._field(body, "choices", 0, "message", "content")
        text = self._text(content, "choices[0].message.content")
        usage = body.get("usage")
        return RawCompletion(
            text, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
        )


class AnthropicLLM(HTTPChatLLM):
    """Anthropic's Messages API (POST /v1/messages)."""

    name = "anthropic"
    path = "/v1/messages"
    default_base_url = "https://api.anthropic.com"

    def _headers(self, api_key: str) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def _payload(
        self, prompt: str, *, system: str | None, json_mode: bool, max_tokens: int
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
        }
        if json_mode:
            system = f"{system}\n\n{JSON_INSTRUCTION}" if system else JSON_INSTRUCTION
        if system:
            payload["system"] = system
        return payload

    def _read(self, body: Any) -> RawCompletion:
        blocks = self._field(body, "content")
        if not isinstance(blocks, list):
            raise BadResponse(f"{self.name}: content in the reply from {self.url} is not a list")
        # A reply may open with a thinking block; the answer is the text blocks.
        text = "".join(
            self._text(b.get("text"), "content[].text")
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )
        usage = body.get("usage")
        return RawCompletion(text, _count(usage, "input_tokens"), _count(usage, "output_tokens"))


def _chat_messages(prompt: str, system: str | None) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    return messages


def _count(obj: Any, key: str) -> int | None:
    """A token count when the server reported one; servers that do not are not an error."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _join(base_url: str, path: str) -> str:
    base = base_url.rstrip("/")
    if base.endswith("/v1") and path.startswith("/v1/"):
        base = base[: -len("/v1")]
    return base + path


def _detail(response: httpx.Response) -> str:
    """The server's own error message when it sent one in a known shape, else the body's start."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or "(empty body)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"][:200]
    if isinstance(error, str):
        return error[:200]
    return response.text[:200]
