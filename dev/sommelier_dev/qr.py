"""Printable shelf labels: a QR code of a wine's deep link with the wine's name under it (PNG).

segno draws the code (a maintained, dependency-free QR encoder); Pillow lays out the label.
"""

from __future__ import annotations

import io
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Pillow is imported when a label is drawn
    from PIL.ImageDraw import ImageDraw
    from PIL.ImageFont import FreeTypeFont, ImageFont

QR_SCALE = 12  # pixels per module: ~40 mm wide at 300 dpi for a version-3 code
QR_BORDER = 4  # the quiet zone the QR standard asks for, in modules
FONT_SIZE = 34
LINE_GAP = 8
MAX_LABEL_LINES = 3

_FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/Library/Fonts/Arial Unicode.ttf",
    "C:/Windows/Fonts/arial.ttf",
)


@lru_cache(maxsize=1)
def _font_path() -> str | None:
    """A TrueType font with Cyrillic letters: the system's DejaVu Sans, or the copy matplotlib ships."""
    for candidate in _FONT_CANDIDATES:
        if Path(candidate).is_file():
            return candidate
    try:
        import matplotlib

        bundled = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        return str(bundled) if bundled.is_file() else None
    except ImportError:
        return None


def _font(size: int) -> FreeTypeFont | ImageFont:
    from PIL import ImageFont

    path = _font_path()
    if path:
        return ImageFont.truetype(path, size)
    return ImageFont.load_default(size)  # Pillow's own font: Latin only, but never fails


def _wrap(draw: ImageDraw, text: str, font: FreeTypeFont | ImageFont, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        trial = f"{current} {word}".strip()
        if draw.textlength(trial, font=font) <= width or not current:
            current = trial
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    if len(lines) > MAX_LABEL_LINES:
        lines = lines[:MAX_LABEL_LINES]
        lines[-1] = lines[-1].rstrip(".,") + "…"
    return lines


def label_png(url: str, caption: str) -> bytes:
    """A PNG: the QR code of ``url`` (error correction M) with ``caption`` centred under it."""
    import segno
    from PIL import Image, ImageDraw

    code = segno.make_qr(url, error="m")
    buffer = io.BytesIO()
    code.save(buffer, kind="png", scale=QR_SCALE, border=QR_BORDER)
    buffer.seek(0)
    qr_image = Image.open(buffer).convert("L")
    width = qr_image.width
    font = _font(FONT_SIZE)
    measure = ImageDraw.Draw(qr_image)
    lines = _wrap(measure, " ".join(caption.split()), font, width - 2 * QR_SCALE * QR_BORDER // 2)
    line_height = FONT_SIZE + LINE_GAP
    label = Image.new("L", (width, qr_image.height + line_height * len(lines) + QR_SCALE * QR_BORDER // 2), 255)
    label.paste(qr_image, (0, 0))
    draw = ImageDraw.Draw(label)
    top = qr_image.height - QR_SCALE * QR_BORDER // 2
    for index, line in enumerate(lines):
        left = (width - draw.textlength(line, font=font)) / 2
        draw.text((left, top + index * line_height), line, fill=0, font=font)
    out = io.BytesIO()
    label.save(out, format="PNG", dpi=(300, 300))
    return out.getvalue()


def label_filename(ref: str, name: str) -> str:
    """A safe file name: the sku/id (Cyrillic kept) and a transliteration-free slug of the name."""
    slug = unicodedata.normalize("NFKC", name).casefold()
    slug = re.sub(r"[^\w]+", "-", slug).strip("-")[:60] or "wine"
    safe_ref = re.sub(r"[^\w-]+", "-", unicodedata.normalize("NFKC", ref)).strip("-")[:64] or "wine"  # «ВЛ-0101» kept
    return f"{safe_ref}-{slug}.png"
