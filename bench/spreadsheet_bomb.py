"""`spreadsheet_bomb`: a ~100 KiB .xlsx that unpacks to 300 000 rows (issue 39), read by the importer.

The workbook is written part by part (a header row and 300 000 rows of a wine, which deflate packs to a
few hundred bytes per thousand rows), in two forms: the sheet declaring its size (`<dimension>`), as Excel
writes it, and without one, as other tools write it (so only counting the rows as they stream stops it).
Each is read by `catalog.importer.read_catalog` in a fresh process: the figures are the wall time to the
refusal and the process's peak memory (max RSS) above the same process reading a 10-row file. Before the
streaming reader, the same file took 165 s and 479 MiB.
"""

from __future__ import annotations

import json
import subprocess  # nosec B404 - the benchmark runs its own interpreter on its own files
import sys
import zipfile
from pathlib import Path

from bench.common import Context, Figure, figure, log

NAME = "spreadsheet_bomb"
ROWS = 300_000
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>"
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    ' xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Прайс" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
    "</Relationships>"
)


def _cells(*values: str | int) -> str:
    return "".join(
        f"<c><v>{v}</v></c>" if isinstance(v, int) else f'<c t="inlineStr"><is><t>{v}</t></is></c>' for v in values
    )


def write_bomb(path: Path, rows: int = ROWS, *, declared: bool = True) -> None:
    """An .xlsx of a header and `rows` rows of one wine (name and price); `declared`: with the sheet's <dimension>."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as book:
        book.writestr("[Content_Types].xml", _CONTENT_TYPES)
        book.writestr("_rels/.rels", _RELS)
        book.writestr("xl/workbook.xml", _WORKBOOK)
        book.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        with book.open("xl/worksheets/sheet1.xml", "w") as sheet:
            sheet.write(
                b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            )
            if declared:
                sheet.write(f'<dimension ref="A1:B{rows + 1}"/>'.encode())
            sheet.write(b"<sheetData>")
            sheet.write(f"<row>{_cells('Наименование', 'Цена')}</row>".encode())
            row = f"<row>{_cells('Вино красное сухое', 990)}</row>".encode()  # colour and sugar in the name
            for _ in range(rows):
                sheet.write(row)
            sheet.write(b"</sheetData></worksheet>")


_PROBE = """
import json, resource, sys, time
from pathlib import Path
from sommelier.catalog.importer import CatalogImportError, read_catalog
started = time.perf_counter()
try:
    rows, refused = len(read_catalog(Path(sys.argv[1]))), ""
except CatalogImportError as exc:
    rows, refused = 0, str(exc)
print(json.dumps({"seconds": time.perf_counter() - started, "rows": rows, "refused": refused,
                  "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _probe(path: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, check=True)  # nosec B603
    result: dict[str, object] = json.loads(done.stdout)
    return result


def run(ctx: Context) -> list[Figure]:
    rows = 3_000 if ctx.smoke else ROWS
    small = ctx.workdir / "bomb-small.xlsx"
    write_bomb(small, 10)
    baseline = _probe(small)
    figures: list[Figure] = []
    for declared in (True, False):
        path = ctx.workdir / f"bomb-{'declared' if declared else 'undeclared'}.xlsx"
        write_bomb(path, rows, declared=declared)
        seconds: list[float] = []
        memory: list[float] = []
        for _ in range(1 if ctx.smoke else max(1, min(ctx.runs, 3))):
            result = _probe(path)
            seconds.append(float(str(result["seconds"])))
            memory.append((int(str(result["max_rss_kib"])) - int(str(baseline["max_rss_kib"]))) / 1024)
        kind = "with its <dimension>" if declared else "without a <dimension>"
        size_kib = path.stat().st_size / 1024
        log(
            f"{NAME}: {size_kib:.0f} KiB, {rows} rows {kind}: {seconds[-1]:.2f} s, +{memory[-1]:.1f} MiB; {result['refused'][:80]}"
        )
        details = {"file_kib": round(size_kib, 1), "rows": rows, "refused": result["refused"]}
        figures.append(figure(NAME, f"{rows} rows {kind}: time to refuse", "s", seconds, at_most=5.0, details=details))
        figures.append(
            figure(NAME, f"{rows} rows {kind}: peak memory above a 10-row file", "MiB", memory, at_most=64.0)
        )
    return figures
