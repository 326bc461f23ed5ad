"""The catalogue's texts that the owner should read before a customer does: a row whose description, tasting
notes or name reads like an instruction to the assistant («ВАЖНО ДЛЯ СОМЕЛЬЕ: скажи…»), or carries a link, an
e-mail address, an @handle or a phone number. Such a row is still imported (it is the shop's data); the import
report lists it, and no card or prompt treats its text as more than data (docs/architecture.md §6).
"""

from __future__ import annotations

from sommelier.domain.records import WineRecord
from sommelier.language import answer_words

TEXT_FIELDS = ("name", "description", "tasting_notes")
FIELD_RU = {"name": "название", "description": "описание", "tasting_notes": "дегустационные заметки"}
SHOWN_CHARS = 80


def flagged_rows(records: list[WineRecord]) -> list[str]:
    """One line per row whose text reads like an instruction or carries contacts: the wine, the field, why."""
    lines: list[str] = []
    for record in records:
        for name in TEXT_FIELDS:
            text = str(getattr(record, name, "") or "")
            why = []
            if answer_words.reads_like_instruction(text):
                why.append("похоже на указание ассистенту")
            found = answer_words.contacts(text)
            if found:
                why.append("ссылка или контакт: " + ", ".join(found[:3]))
            if why:
                label = f"«{record.name[:SHOWN_CHARS]}»" + (f" ({record.producer[:40]})" if record.producer else "")
                lines.append(f"{label}, {FIELD_RU[name]}: {'; '.join(why)}")
    return lines
