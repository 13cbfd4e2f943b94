"""A tiny, dependency-free writer of text PDFs for tests (pypdf reads what it writes)."""

from __future__ import annotations


def make_pdf(pages: list[list[str]], *, title: str | None = None) -> bytes:
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    page_ids: list[int] = []
    pages_id_placeholder = len(objects) + 1 + 2 * len(pages)
    for lines in pages:
        ops = ["BT", "/F1 11 Tf", "14 TL", "50 780 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 842] /Contents %d 0 R"
                b" /Resources << /Font << /F1 %d 0 R >> >> >>" % (pages_id_placeholder, content, font)
            )
        )
    kids = " ".join(f"{pid} 0 R" for pid in page_ids).encode()
    pages_id = add(b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % len(page_ids))
    assert pages_id == pages_id_placeholder
    catalog = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    info = add(b"<< /Title (" + title.encode("latin-1") + b") >>") if title else None

    return assemble(objects, root=catalog, info=info)


def assemble(objects: list[bytes], *, root: int, info: int | None = None) -> bytes:
    """Numbered objects (1-based), a cross-reference table and a trailer around them."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, root)
    if info:
        trailer += b" /Info %d 0 R" % info
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)
