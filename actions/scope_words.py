"""The scope check's reading of text: a request, a name, a stored value or a class name as lower-case words,
so that "Approved", "approved" and "APPROVED_" compare equal and a phrase is found only as whole words."""

from __future__ import annotations

import re
from typing import Any

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def words(text: Any) -> str:
    """Lower-case words separated by single spaces (`_`, `-` and punctuation are separators)."""
    return " ".join(re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", str(text).lower().replace("_", " ")))


def says(text: str, phrase: str) -> bool:
    """Does `text` (already `words`) contain `phrase`'s words as whole words?"""
    wanted = words(phrase)
    return bool(wanted) and re.search(rf"(?<![a-z0-9]){re.escape(wanted)}(?![a-z0-9])", text) is not None


def class_words(name: str) -> str:
    """A class or property name as words: `PurchaseOrder` -> "purchase order", `due_date` -> "due date"."""
    return words(_CAMEL.sub(" ", name))


def names_class(text: str, class_name: str) -> bool:
    """Does the request speak of the class ("suppliers", "purchase order", "warehouses", "categories")?"""
    wanted = class_words(class_name)
    forms = {wanted, wanted + "s", wanted + "es"} | ({wanted[:-1] + "ies"} if wanted.endswith("y") else set())
    return any(says(text, form) for form in forms)
