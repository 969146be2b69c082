"""Bytes to text: markdown and plain text as they are, HTML through a readability-style extractor,
PDF through pypdf; anything else is refused, naming its content type.

HTML keeps the blocks of `<article>` (else `<main>`, else `<body>`) without scripts, navigation,
asides, forms or blocks that are mostly links. Markdown front matter (a YAML mapping between `---`
lines at the top) is metadata: its `title` and `tags` go to the document, and the text starts after
it.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import PurePath

import yaml

from signet.errors import InvalidInput

TEXT_TYPES = {"text/plain": "text", "text/markdown": "markdown", "text/x-markdown": "markdown",
              "text/html": "html", "application/xhtml+xml": "html", "application/pdf": "pdf"}
EXTENSIONS = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".txt": "text",
              ".text": "text", ".rst": "text", ".html": "html", ".htm": "html",
              ".xhtml": "html", ".pdf": "pdf"}
KIND_TYPES = {"markdown": "text/markdown", "text": "text/plain", "html": "text/html",
              "pdf": "application/pdf"}


# Tags taken from front matter: at most this many, each at most MAX_TAG_CHARS long.
MAX_FRONT_MATTER_TAGS = 20
MAX_TAG_CHARS = 100
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Extracted:
    text: str
    title: str | None
    content_type: str
    tags: tuple[str, ...] = ()
    front_matter: str = ""  # the block verbatim, kept with the document's raw text

    @property
    def raw(self) -> str:
        """The document as it came: its front matter, then its text."""
        return self.front_matter + self.text


def kind_of(content_type: str | None, name: str | None, head: bytes = b"") -> str:
    """markdown, text, html or pdf; InvalidInput for anything else."""
    declared = (content_type or "").split(";")[0].strip().lower()
    if declared in TEXT_TYPES:
        return TEXT_TYPES[declared]
    suffix = PurePath(name).suffix.lower() if name else ""
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    if head.startswith(b"%PDF-"):
        return "pdf"
    if declared in ("", "application/octet-stream") and re.match(rb"\s*<(!doctype html|html)", head[:200].lower()):
        return "html"
    if declared == "" and not suffix:
        return "text"
    shown = declared or suffix or "unknown"
    raise InvalidInput(
        f"unsupported content type {shown!r}: documents may be markdown, plain text, HTML or PDF"
    )


def extract(data: bytes, *, content_type: str | None = None, name: str | None = None) -> Extracted:
    kind = kind_of(content_type, name, data[:512])
    if kind == "pdf":
        return _pdf(data)
    text = decode(data, content_type)
    if kind == "html":
        return html_to_text(text)
    if kind != "markdown":
        return Extracted(text.strip(), _name_title(name), KIND_TYPES[kind])
    text = text.lstrip("\ufeff")
    body, front = split_front_matter(text)
    title = _front_title(front) or _markdown_title(body)
    return Extracted(body.strip(), title or _name_title(name), KIND_TYPES[kind], _front_tags(front),
                     text[: len(text) - len(body)])


def split_front_matter(text: str) -> tuple[str, dict[str, object]]:
    """(the text after the front matter, its fields); the text unchanged and {} when it has
    none, or when the block is not a YAML mapping."""
    found = _FRONT_MATTER.match(text)
    if not found:
        return text, {}
    try:
        fields = yaml.safe_load(found.group(1))
    except yaml.YAMLError:
        return text, {}
    if not isinstance(fields, dict):
        return text, {}
    return text[found.end():], {str(k): v for k, v in fields.items()}


def _front_title(front: dict[str, object]) -> str | None:
    title = front.get("title")
    if isinstance(title, str | int | float) and not isinstance(title, bool):
        return str(title).strip() or None
    return None


def _front_tags(front: dict[str, object]) -> tuple[str, ...]:
    raw = front.get("tags")
    if isinstance(raw, str):
        items: list[object] = list(raw.split(","))
    elif isinstance(raw, list | tuple):
        items = list(raw)
    else:
        return ()
    tags = [str(t).strip()[:MAX_TAG_CHARS] for t in items if isinstance(t, str | int | float)]
    return tuple(dict.fromkeys(t for t in tags if t))[:MAX_FRONT_MATTER_TAGS]


def decode(data: bytes, content_type: str | None = None) -> str:
    charset = re.search(r"charset=([\w-]+)", content_type or "", re.IGNORECASE)
    for encoding in ("utf-8-sig", *( [charset.group(1)] if charset else [] )):
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    raise InvalidInput("the document is not UTF-8 text (nor in the charset it declares)")


def _name_title(name: str | None) -> str | None:
    return PurePath(name).stem if name else None


def _markdown_title(text: str) -> str | None:
    heading = re.search(r"^#\s+(.+)$", text, re.MULTILINE)
    return heading.group(1).strip() if heading else None


def _pdf(data: bytes) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = reader.metadata.title if reader.metadata else None
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"the PDF cannot be read: {exc}") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    return Extracted(text, str(title) if title else None, "application/pdf")


# --- HTML -------------------------------------------------------------------------------------

SKIP = {"script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside",
        "form", "iframe", "button", "select", "head"}
BLOCKS = {"p", "div", "section", "article", "main", "li", "ul", "ol", "pre", "blockquote",
          "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "tr", "table", "dt", "dd", "br",
          "figcaption", "hr", "body"}
VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source",
        "track", "wbr"}


@dataclass
class _Block:
    text: list[str] = field(default_factory=list)
    link_chars: int = 0
    region: str = "body"


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.blocks: list[_Block] = []
        self.current = _Block()
        self.title: list[str] = []
        self.h1: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            if tag in BLOCKS:
                self._flush()
            return
        self.stack.append(tag)
        if tag in SKIP:
            self.skipping += 1
        if tag in BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.stack:
            return
        while self.stack:
            open_tag = self.stack.pop()
            if open_tag in SKIP:
                self.skipping -= 1
            if open_tag in BLOCKS:
                self._flush()
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if "title" in self.stack:
            self.title.append(data)
            return
        if self.skipping:
            return
        if "h1" in self.stack:
            self.h1.append(data)
        self.current.text.append(data)
        if "a" in self.stack:
            self.current.link_chars += len(data.strip())

    def _flush(self) -> None:
        if "".join(self.current.text).strip():
            self.current.region = next(
                (r for r in ("article", "main") if r in self.stack), "body")
            self.blocks.append(self.current)
        self.current = _Block()


def html_to_text(html: str) -> Extracted:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    reader._flush()
    blocks = reader.blocks
    for region in ("article", "main"):
        inside = [b for b in blocks if b.region == region]
        if inside:
            blocks = inside
            break
    paragraphs = []
    for block in blocks:
        text = re.sub(r"\s+", " ", "".join(block.text)).strip()
        if text and block.link_chars / max(len(text), 1) <= 0.5:
            paragraphs.append(text)
    title = re.sub(r"\s+", " ", "".join(reader.title)).strip() or \
        re.sub(r"\s+", " ", "".join(reader.h1)).strip() or None
    return Extracted("\n\n".join(paragraphs), title, "text/html")
