"""Text out of markdown, HTML (readability-style) and PDF; anything else refused by name."""

from __future__ import annotations

import pytest

from signet.documents.extract import extract
from signet.errors import InvalidInput

ARTICLE = b"""<!doctype html><html><head><title>Tea notes</title>
<style>p { color: red }</style><script>var tracking = 1;</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<header>Site banner</header>
<article><h1>Oolong</h1><p>Oolong is a partly oxidised tea.</p>
<p>It is brewed at 90 degrees &amp; steeped twice.</p>
<div class="tags"><a href="/t/a">tea</a> <a href="/t/b">china</a></div></article>
<aside>Related links</aside><footer>Copyright</footer></body></html>"""


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF with `text` in Helvetica, cross-reference offsets computed."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_html_keeps_the_article_and_drops_the_page_around_it() -> None:
    got = extract(ARTICLE, content_type="text/html; charset=utf-8")
    assert got.title == "Tea notes" and got.content_type == "text/html"
    assert got.text == ("Oolong\n\nOolong is a partly oxidised tea.\n\n"
                        "It is brewed at 90 degrees & steeped twice.")


def test_markdown_title_comes_from_front_matter_or_the_first_heading() -> None:
    assert extract(b"---\ntitle: Plans\n---\n# Other\nBody", name="a.md").title == "Plans"
    assert extract(b"intro\n# Heading\nBody", name="a.md").title == "Heading"
    assert extract(b"no heading", name="notes/today.txt").title == "today"


def test_pdf_text_is_extracted() -> None:
    got = extract(minimal_pdf("Signet reads PDF files"), name="paper.pdf")
    assert "Signet reads PDF files" in got.text and got.content_type == "application/pdf"


def test_a_broken_pdf_and_unsupported_types_are_refused_by_name() -> None:
    with pytest.raises(InvalidInput, match="PDF cannot be read"):
        extract(b"%PDF-1.4 garbage", name="x.pdf")
    with pytest.raises(InvalidInput, match="image/png"):
        extract(b"\x89PNG", content_type="image/png")
    with pytest.raises(InvalidInput, match=".docx"):
        extract(b"PK", name="report.docx")
    with pytest.raises(InvalidInput, match="not UTF-8"):
        extract(b"\xff\xfe\xfa bad", name="a.txt")


def test_front_matter_is_metadata_and_leaves_the_text() -> None:
    got = extract(b"---\r\ntitle: Plans\r\ntags: alpha, beta\r\n---\r\nBody text", name="a.md")
    assert (got.text, got.title, got.tags) == ("Body text", "Plans", ("alpha", "beta"))
    assert got.raw == "---\r\ntitle: Plans\r\ntags: alpha, beta\r\n---\r\nBody text"
    listed = extract(b"---\ntags: [x, 3, x]\n---\n# Head\nBody", name="a.md")
    assert (listed.title, listed.tags, listed.text) == ("Head", ("x", "3"), "# Head\nBody")
    # Not a YAML mapping (a horizontal rule, a list): the text stays whole.
    rule = extract(b"---\n- one\n- two\n---\nBody", name="a.md")
    assert rule.text.startswith("---\n- one") and rule.tags == ()
    broken = extract(b"---\ntitle: [unclosed\n---\nBody", name="a.md")
    assert broken.text.startswith("---") and broken.title == "a"
    plain = extract(b"---\ntitle: X\n---\nBody", name="a.txt")  # plain text has no front matter
    assert plain.text.startswith("---") and plain.title == "a"
