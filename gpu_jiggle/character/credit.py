"""The credit a character's file carries for its authors and licence, for the files the
product renders from it (videos, GIFs, frames): glTF's ``asset.copyright`` (glTF 2.0, section
5.2 "Asset"), then a VRM's meta, VRM 0.x (``extensions.VRM.meta``: title, author,
licenseName, otherLicenseUrl) or VRM 1.0 (``extensions.VRMC_vrm.meta``: name, authors,
licenseUrl, copyrightInformation), in that order, joined with "; ".

The text comes from the file as read, so nothing in it is trusted: only strings count, control
characters become spaces and the whole is cut at :data:`MAX_CREDIT_CHARS`.
"""
from __future__ import annotations

#: The longest credit kept, in characters (an mp4's metadata and a GIF's comment hold it whole).
MAX_CREDIT_CHARS = 2000


def _text(value) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join("".join(c if c.isprintable() else " " for c in value).split())


def _vrm0(meta: dict) -> str:
    title, author = _text(meta.get("title")), _text(meta.get("author"))
    licence = _text(meta.get("licenseName"))
    if licence == "Other":
        licence = _text(meta.get("otherLicenseUrl")) or licence
    text = " by ".join(part for part in (title, author) if part)
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
    return text[:MAX_CREDIT_CHARS] or None
