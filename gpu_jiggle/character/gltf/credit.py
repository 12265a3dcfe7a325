"""The credit a character's file carries for its authors and licence, for the files the
product renders from it (videos, GIFs, frames): glTF's ``asset.copyright`` (glTF 2.0, section
5.2 "Asset"), then a VRM's meta, VRM 0.x (``extensions.VRM.meta``: title, author, reference
(the original it adapts), licenseName, otherLicenseUrl) or VRM 1.0
(``extensions.VRMC_vrm.meta``: name, authors, licenseUrl, copyrightInformation), in that
order, joined with "; ". A VRM 0.x licence name reads as written ("CC_BY_NC" as "CC BY-NC").

The text comes from the file as read, so nothing in it is trusted: only strings count; control
characters and line breaks become spaces and the bidirectional overrides and isolates (which
could make the credit display as something else) are dropped, other format characters (the
joiners that some scripts and emoji need) kept; a credit longer than
:data:`MAX_CREDIT_CHARS` is cut there and ends with "…".
"""
from __future__ import annotations

import unicodedata

#: The longest credit kept, in characters (an mp4's metadata and a GIF's comment hold it whole).
MAX_CREDIT_CHARS = 2000
#: Bidirectional embeddings, overrides and isolates (Unicode's UAX #9), dropped from a credit.
BIDI_CONTROLS = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))


def _character(c: str) -> str:
    if c in BIDI_CONTROLS:
        return ""
    return " " if unicodedata.category(c) in ("Cc", "Zl", "Zp", "Cs") else c


def _text(value) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join("".join(_character(c) for c in value).split())


def _licence_name(name: str) -> str:
    """A VRM 0.x licenseName as it reads: ``CC_BY_NC_SA`` → ``CC BY-NC-SA``, others with spaces."""
    if name.startswith("CC_"):
        return "CC " + name[3:].replace("_", "-")
    return name.replace("_", " ")


def _vrm0(meta: dict) -> str:
    title, author, reference = _text(meta.get("title")), _text(meta.get("author")), _text(meta.get("reference"))
    licence = _licence_name(_text(meta.get("licenseName")))
    if licence == "Other":
        licence = _text(meta.get("otherLicenseUrl")) or licence
    text = "; ".join(part for part in (" by ".join(part for part in (title, author) if part), reference) if part)
    return f"{text} ({licence})" if text and licence else text or licence


def _vrm1(meta: dict) -> str:
    authors = meta.get("authors")
    names = ", ".join(_text(a) for a in authors if _text(a)) if isinstance(authors, list) else ""
    text = " by ".join(part for part in (_text(meta.get("name")), names) if part)
    licence = _text(meta.get("licenseUrl"))
    parts = [f"{text} ({licence})" if text and licence else text or licence, _text(meta.get("copyrightInformation"))]
    return "; ".join(part for part in parts if part)


def credit_of(document) -> str | None:
    """The credit of a glTF or VRM file's JSON ``document`` (a dict as read), or None where it
    gives none. A str of at most :data:`MAX_CREDIT_CHARS` printable characters."""
    if not isinstance(document, dict):
        return None
    parts = []
    asset = document.get("asset")
    if isinstance(asset, dict):
        parts.append(_text(asset.get("copyright")))
    extensions = document.get("extensions")
    if isinstance(extensions, dict):
        for name, credit in (("VRM", _vrm0), ("VRMC_vrm", _vrm1)):
            extension = extensions.get(name)
            meta = extension.get("meta") if isinstance(extension, dict) else None
            if isinstance(meta, dict):
                parts.append(credit(meta))
    text = "; ".join(part for part in parts if part)
    if len(text) > MAX_CREDIT_CHARS:
        text = text[:MAX_CREDIT_CHARS - 1] + "…"
    return text or None
