#!/usr/bin/env python3
"""Render a bottle-label card PNG for every wine of the shipped catalogue.

Reads ``data/catalog/wines.json`` (or the file given with ``--catalog``) and writes, for every
wine, an 800x1000 PNG to the path in its ``image`` field (relative to the JSON file's folder).
The output is deterministic: the same catalogue gives the same bytes (no timestamps, no
randomness), so the PNGs can live in git.

    python scripts/render_labels.py                 # render all
    python scripts/render_labels.py --only opus-one-2019
    python scripts/render_labels.py --check         # exit 1 if any image file is missing

Needs only Pillow. Cyrillic text uses the DejaVu fonts from /usr/share/fonts/truetype/dejavu/
and falls back to Pillow's built-in font when they are missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CATALOG = REPO_ROOT / "data" / "catalog" / "wines.json"

WIDTH, HEIGHT = 800, 1000
SCALE = 2  # draw at 2x, then downsample: smooth edges without anti-aliased primitives
PALETTE_COLOURS = 96

FONT_DIRS = (
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/local/share/fonts"),
)
SERIF_BOLD = "DejaVuSerif-Bold.ttf"
SERIF = "DejaVuSerif.ttf"
SANS = "DejaVuSans.ttf"
SANS_BOLD = "DejaVuSans-Bold.ttf"

TYPE_RU = {"red": "красное", "white": "белое", "rose": "розовое", "sparkling": "игристое"}
SWEETNESS_RU = {"dry": "сухое", "semi_dry": "полусухое", "semi_sweet": "полусладкое", "sweet": "сладкое"}

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Theme:
    background: RGB
    background_edge: RGB  # the darker frame band around the card
    accent: RGB  # frame lines, ornaments, the type pill
    ink: RGB  # main text on the label
    soft_ink: RGB  # secondary text on the label
    paper: RGB  # the label itself
    glass: RGB  # bottle body
    glass_shine: RGB
    capsule: RGB
    pill_text: RGB
    bubbles: bool = False


THEMES: dict[str, Theme] = {
    "red": Theme(
        background=(98, 20, 40),
        background_edge=(70, 12, 28),
        accent=(196, 156, 86),
        ink=(74, 18, 34),
        soft_ink=(112, 70, 72),
        paper=(250, 243, 228),
        glass=(38, 22, 26),
        glass_shine=(86, 56, 62),
        capsule=(150, 24, 44),
        pill_text=(255, 248, 235),
    ),
    "white": Theme(
        background=(238, 222, 162),
        background_edge=(214, 192, 120),
        accent=(150, 118, 42),
        ink=(72, 60, 24),
        soft_ink=(116, 100, 60),
        paper=(255, 252, 240),
        glass=(122, 140, 78),
        glass_shine=(178, 192, 130),
        capsule=(196, 164, 74),
        pill_text=(255, 252, 240),
    ),
    "rose": Theme(
        background=(238, 160, 146),
        background_edge=(214, 124, 112),
        accent=(166, 66, 78),
        ink=(104, 34, 46),
        soft_ink=(140, 84, 88),
        paper=(255, 246, 242),
        glass=(246, 196, 186),
        glass_shine=(255, 232, 226),
        capsule=(196, 92, 104),
        pill_text=(255, 246, 242),
    ),
    "sparkling": Theme(
        background=(222, 206, 160),
        background_edge=(190, 172, 124),
        accent=(132, 110, 62),
        ink=(60, 54, 40),
        soft_ink=(104, 96, 78),
        paper=(250, 248, 242),
        glass=(44, 62, 46),
        glass_shine=(96, 118, 98),
        capsule=(206, 180, 104),
        pill_text=(250, 248, 242),
        bubbles=True,
    ),
}


# ─────────────────────────────────────────── fonts ───────────────────────────────────────────


@cache
def _font_path(name: str) -> Path | None:
    for folder in FONT_DIRS:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


@cache
def font(name: str, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """A TrueType font at `size` (already scaled); Pillow's built-in font when DejaVu is missing."""
    path = _font_path(name)
    if path is not None:
        try:
            return ImageFont.truetype(str(path), size)
        except OSError:
            pass
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


def text_width(text: str, fnt: ImageFont.ImageFont) -> float:
    return fnt.getlength(text)


def wrap(text: str, fnt: ImageFont.ImageFont, max_width: float) -> list[str]:
    """Greedy word wrap; a word longer than the line stays whole (the caller shrinks the font)."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        trial = f"{current} {word}".strip()
        if not current or text_width(trial, fnt) <= max_width:
            current = trial
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def fit_lines(
    text: str, font_name: str, max_size: int, min_size: int, max_width: float, max_lines: int
) -> tuple[ImageFont.ImageFont, list[str]]:
    """The largest font size at which `text` wraps into at most `max_lines` lines that all fit."""
    size = max_size
    while True:
        fnt = font(font_name, size)
        lines = wrap(text, fnt, max_width)
        fits = len(lines) <= max_lines and all(text_width(line, fnt) <= max_width for line in lines)
        if fits or size <= min_size:
            break
        size -= 2 * SCALE
    if len(lines) > max_lines:  # still too long at the smallest size: ellipsise the last line
        lines = lines[:max_lines]
        last = lines[-1]
        while last and text_width(last + "…", fnt) > max_width:
            last = last[:-1].rstrip()
        lines[-1] = last + "…"
    return fnt, lines


def fit_items(
    items: list[str], font_name: str, max_size: int, min_size: int, max_width: float, max_lines: int
) -> tuple[ImageFont.ImageFont, list[str]]:
    """Like fit_lines, but breaks only between items ("Пти Вердо" never splits across lines)."""
    size = max_size
    while True:
        fnt = font(font_name, size)
        lines: list[str] = []
        for item in items:
            trial = f"{lines[-1]}, {item}" if lines else item
            if lines and text_width(trial, fnt) <= max_width:
                lines[-1] = trial
            else:
                if lines:
                    lines[-1] += ","
                lines.append(item)
        fits = len(lines) <= max_lines and all(text_width(line, fnt) <= max_width for line in lines)
        if fits or size <= min_size:
            break
        size -= 2 * SCALE
    if len(lines) > max_lines or any(text_width(line, fnt) > max_width for line in lines):
        return fit_lines(", ".join(items), font_name, size, size, max_width, max_lines)
    return fnt, lines


# ─────────────────────────────────────────── drawing ───────────────────────────────────────────


def s(value: float) -> int:
    """Scale a 1x coordinate to the 2x drawing canvas."""
    return round(value * SCALE)


def line_height(fnt: ImageFont.ImageFont, factor: float = 1.18) -> int:
    ascent, descent = fnt.getmetrics() if hasattr(fnt, "getmetrics") else (fnt.size, 0)
    return round((ascent + descent) * factor)


def draw_centered(draw: ImageDraw.ImageDraw, y: int, text: str, fnt: ImageFont.ImageFont, fill: RGB) -> None:
    draw.text((s(WIDTH / 2), y), text, font=fnt, fill=fill, anchor="ma")


def spaced(text: str) -> str:
    """Letter-spaced capitals for the producer line (three spaces keep the words apart)."""
    return "   ".join(" ".join(word) for word in text.upper().split())


def draw_bottle(draw: ImageDraw.ImageDraw, theme: Theme, cx: float, top: float, height: float) -> None:
    """A stylised bottle silhouette: capsule, neck, shoulders, body, a small label and a shine."""
    body_w = height * 0.34
    neck_w = body_w * 0.34
    capsule_h = height * 0.14
    neck_h = height * 0.30
    shoulder_h = height * 0.12
    body_top = top + neck_h + shoulder_h
    bottom = top + height
    left, right = cx - body_w / 2, cx + body_w / 2
    nl, nr = cx - neck_w / 2, cx + neck_w / 2

    # body + shoulders as one polygon, then the rounded base
    draw.polygon(
        [
            (s(nl), s(top + capsule_h * 0.6)),
            (s(nr), s(top + capsule_h * 0.6)),
            (s(nr), s(top + neck_h)),
            (s(right), s(body_top)),
            (s(right), s(bottom - body_w * 0.12)),
            (s(left), s(bottom - body_w * 0.12)),
            (s(left), s(body_top)),
            (s(nl), s(top + neck_h)),
        ],
        fill=theme.glass,
    )
    draw.rounded_rectangle([s(left), s(body_top), s(right), s(bottom)], radius=s(body_w * 0.12), fill=theme.glass)
    # capsule / foil
    draw.rounded_rectangle([s(nl - 2), s(top), s(nr + 2), s(top + capsule_h)], radius=s(4), fill=theme.capsule)
    # shine
    shine_x = left + body_w * 0.16
    draw.rounded_rectangle(
        [s(shine_x), s(body_top + height * 0.04), s(shine_x + body_w * 0.07), s(bottom - height * 0.10)],
        radius=s(body_w * 0.035),
        fill=theme.glass_shine,
    )
    # mini label on the bottle
    lab_top = body_top + (bottom - body_top) * 0.30
    lab_bottom = body_top + (bottom - body_top) * 0.78
    draw.rectangle([s(left + 3), s(lab_top), s(right - 3), s(lab_bottom)], fill=theme.paper)
    draw.rectangle([s(left + 3), s(lab_top + 5), s(right - 3), s(lab_top + 8)], fill=theme.accent)
    draw.rectangle([s(left + 3), s(lab_bottom - 8), s(right - 3), s(lab_bottom - 5)], fill=theme.accent)
    draw.ellipse(
        [s(cx - 9), s((lab_top + lab_bottom) / 2 - 9), s(cx + 9), s((lab_top + lab_bottom) / 2 + 9)],
        outline=theme.accent,
        width=s(2),
    )


def draw_bubbles(draw: ImageDraw.ImageDraw, theme: Theme, seed: int) -> None:
    """Deterministic 'bubbles' for sparkling wines (a tiny LCG seeded from the slug)."""
    state = seed or 1
    for _ in range(26):
        state = (1103515245 * state + 12345) % (2**31)
        x = 40 + state % (WIDTH - 80)
        state = (1103515245 * state + 12345) % (2**31)
        y = 30 + state % 300
        state = (1103515245 * state + 12345) % (2**31)
        r = 3 + state % 9
        if 300 < x < 500:  # keep the bottle area clear
            continue
        draw.ellipse([s(x - r), s(y - r), s(x + r), s(y + r)], outline=theme.background_edge, width=s(2))


def draw_ornament(draw: ImageDraw.ImageDraw, theme: Theme, y: float, half_width: float = 120) -> None:
    cx = WIDTH / 2
    draw.line([(s(cx - half_width), s(y)), (s(cx - 14), s(y))], fill=theme.accent, width=s(2))
    draw.line([(s(cx + 14), s(y)), (s(cx + half_width), s(y))], fill=theme.accent, width=s(2))
    draw.polygon([(s(cx), s(y - 7)), (s(cx + 7), s(y)), (s(cx), s(y + 7)), (s(cx - 7), s(y))], fill=theme.accent)


def style_line(wine: dict) -> str:
    wine_type = wine.get("wine_type", "")
    sweetness = wine.get("sweetness", "")
    kind = TYPE_RU.get(wine_type, wine_type)
    sweet = SWEETNESS_RU.get(sweetness, sweetness)
    if wine_type == "sparkling" and sweetness == "dry":
        sweet = "брют"
    return f"{kind} {sweet}".strip()


def slug_of(wine: dict) -> str:
    return Path(str(wine.get("image") or "")).stem


# A row of the label's text: its text, font, colour and advance; None text is the ornament.
LabelRow = tuple[str | None, ImageFont.ImageFont | None, RGB, int]


def label_rows(wine: dict, theme: Theme, inner_w: int) -> list[LabelRow]:
    """The label's text, laid out in rows: producer, name, vintage, ornament, place, appellation, grapes."""
    rows: list[LabelRow] = []

    producer = str(wine.get("producer", "")).strip()
    pfnt = font(SANS, s(22))
    plines = [spaced(producer)]  # drawn as is: wrap() would collapse the word gaps
    if text_width(plines[0], pfnt) > inner_w:
        pfnt, plines = fit_lines(producer.upper(), SANS, s(24), s(14), inner_w, 2)
    for i, line in enumerate(plines):
        rows.append((line, pfnt, theme.soft_ink, line_height(pfnt) + (s(14) if i == len(plines) - 1 else 0)))

    name = str(wine.get("name", "")).strip()
    nfnt, nlines = fit_lines(name, SERIF_BOLD, s(50), s(26), inner_w, 3)
    for i, line in enumerate(nlines):
        rows.append((line, nfnt, theme.ink, line_height(nfnt, 1.12) + (s(10) if i == len(nlines) - 1 else 0)))

    vintage = wine.get("vintage_year")
    vfnt = font(SERIF_BOLD, s(40))
    rows.append((str(vintage) if vintage else "NV", vfnt, theme.accent, line_height(vfnt) + s(8)))
    rows.append((None, None, theme.accent, s(26)))  # ornament

    place = " · ".join(p for p in (str(wine.get("country", "")).strip(), str(wine.get("region", "")).strip()) if p)
    rfnt, rlines = fit_lines(place, SANS, s(24), s(16), inner_w, 2)
    for line in rlines:
        rows.append((line, rfnt, theme.ink, line_height(rfnt)))
    appellation = str(wine.get("appellation") or "").strip()
    if appellation:
        afnt, alines = fit_lines(appellation, SERIF, s(20), s(14), inner_w, 1)
        rows.append((alines[0], afnt, theme.soft_ink, line_height(afnt)))

    grapes = [str(g).strip() for g in wine.get("grape_varieties") or [] if str(g).strip()]
    if grapes:
        gfnt, glines = fit_items(grapes, SANS, s(21), s(14), inner_w, 3)
        rows.append(("", None, theme.ink, s(10)))  # spacer
        for line in glines:
            rows.append((line, gfnt, theme.soft_ink, line_height(gfnt)))
    return rows


def render(wine: dict) -> Image.Image:
    theme = THEMES.get(wine.get("wine_type", ""), THEMES["red"])
    img = Image.new("RGB", (s(WIDTH), s(HEIGHT)), theme.background_edge)
    draw = ImageDraw.Draw(img)

    # background with an inner field and a thin accent frame
    draw.rectangle([s(18), s(18), s(WIDTH - 18), s(HEIGHT - 18)], fill=theme.background)
    draw.rectangle([s(30), s(30), s(WIDTH - 30), s(HEIGHT - 30)], outline=theme.accent, width=s(2))

    slug = slug_of(wine)
    if theme.bubbles:
        draw_bubbles(draw, theme, sum((i + 1) * ord(c) for i, c in enumerate(slug)))
    draw_bottle(draw, theme, cx=WIDTH / 2, top=52, height=290)

    # the label panel
    px0, py0, px1, py1 = 70, 368, WIDTH - 70, HEIGHT - 56
    draw.rounded_rectangle([s(px0), s(py0), s(px1), s(py1)], radius=s(18), fill=theme.paper)
    draw.rounded_rectangle(
        [s(px0 + 12), s(py0 + 12), s(px1 - 12), s(py1 - 12)], radius=s(12), outline=theme.accent, width=s(2)
    )
    inner_w = s(px1 - px0 - 84)

    # Lay the text out first, then centre the block vertically between the label top and the type pill.
    rows = label_rows(wine, theme, inner_w)

    pill_h = s(44)
    pill_y0 = s(py1 - 34) - pill_h
    top, bottom = s(py0 + 40), pill_y0 - s(24)
    block = sum(row[3] for row in rows)
    y = top + max(0, (bottom - top - block) // 2)
    for text, fnt, colour, advance in rows:
        if text is None:
            draw_ornament(draw, theme, y / SCALE)
        elif text and fnt is not None:
            draw_centered(draw, y, text, fnt, colour)
        y += advance

    # the type / sweetness pill, pinned to the bottom of the label
    style = style_line(wine).upper()
    sfnt = font(SANS_BOLD, s(20))
    pill_w = text_width(style, sfnt) + s(48)
    pill_y0 = max(pill_y0, y + s(10))
    draw.rounded_rectangle(
        [s(WIDTH / 2) - pill_w / 2, pill_y0, s(WIDTH / 2) + pill_w / 2, pill_y0 + pill_h],
        radius=pill_h // 2,
        fill=theme.accent,
    )
    draw.text((s(WIDTH / 2), pill_y0 + pill_h / 2), style, font=sfnt, fill=theme.pill_text, anchor="mm")

    return img.resize((WIDTH, HEIGHT), Image.Resampling.LANCZOS)


def save_png(img: Image.Image, path: Path) -> None:
    """A palette PNG without metadata: small and byte-for-byte reproducible."""
    path.parent.mkdir(parents=True, exist_ok=True)
    paletted = img.quantize(colors=PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    paletted.save(path, format="PNG", optimize=True)


# ─────────────────────────────────────────── CLI ───────────────────────────────────────────


def load_wines(catalog: Path) -> list[dict]:
    with catalog.open(encoding="utf-8") as fh:
        data = json.load(fh)
    wines = data["wines"] if isinstance(data, dict) else data
    if not isinstance(wines, list):
        raise SystemExit(f"{catalog}: expected {{'wines': [...]}} or a list")
    return wines


def image_path(catalog: Path, wine: dict) -> Path | None:
    image = wine.get("image")
    return (catalog.parent / image) if image else None


def missing_images(catalog: Path, wines: Iterable[dict]) -> list[str]:
    missing = []
    for wine in wines:
        path = image_path(catalog, wine)
        if path is None or not path.is_file():
            label = f"{wine.get('name')} / {wine.get('producer')} ({wine.get('vintage_year') or 'NV'})"
            missing.append(f"{label}: {wine.get('image') or '<no image field>'}")
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--catalog", type=Path, default=DEFAULT_CATALOG, help=f"catalogue JSON (default {DEFAULT_CATALOG})"
    )
    parser.add_argument(
        "--only",
        metavar="SLUG",
        action="append",
        default=[],
        help="render only the wine whose image file is <SLUG>.png (repeatable)",
    )
    parser.add_argument(
        "--check", action="store_true", help="verify every wine has an image file; exit 1 listing missing ones"
    )
    args = parser.parse_args(argv)

    catalog = args.catalog.resolve()
    wines = load_wines(catalog)

    if args.check:
        missing = missing_images(catalog, wines)
        if missing:
            print(f"{len(missing)} of {len(wines)} wines have no image file:", file=sys.stderr)
            for line in missing:
                print(f"  {line}", file=sys.stderr)
            return 1
        print(f"all {len(wines)} wines have an image file")
        return 0

    selected = [w for w in wines if not args.only or slug_of(w) in set(args.only)]
    if args.only and len({slug_of(w) for w in selected}) != len(set(args.only)):
        unknown = sorted(set(args.only) - {slug_of(w) for w in selected})
        print(f"unknown slug(s): {', '.join(unknown)}", file=sys.stderr)
        return 2

    rendered = 0
    for wine in selected:
        path = image_path(catalog, wine)
        if path is None:
            print(f"skipped (no image field): {wine.get('name')}", file=sys.stderr)
            continue
        save_png(render(wine), path)
        rendered += 1
    print(f"rendered {rendered} label(s) into {catalog.parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
