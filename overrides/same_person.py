"""Do two names in decisions name the same person, as people read them? `Alice`, `alice` with a zero-width
space, `ａｌｉｃｅ` and `аlice` with a Cyrillic `а` all look like one name on a screen, so none of them may
approve what another of them asked for. With no identities configured these names are only claimed (nothing
proves who sent a decision), so this keeps honest people from approving their own request by accident, or
by a trick of spelling; it proves nothing. Errs towards "the same": a false "same" only asks for someone
else's approval. Pure and deterministic (Python's own Unicode tables): safe in workflow code."""

from __future__ import annotations

import unicodedata

# Code points that show nothing, or nothing of their own, but are letters or marks rather than format
# characters (Unicode's Default_Ignorable_Code_Point beyond category Cf), and the blank braille pattern.
_INVISIBLE = {
    0x034F,
    0x115F,
    0x1160,
    0x17B4,
    0x17B5,
    0x2800,
    0x3164,
    0xFFA0,
    *range(0x180B, 0x1810),
    *range(0xFE00, 0xFE10),
    *range(0xE0100, 0xE01F0),
}

# Letters of other scripts that look like Latin ones (a subset of Unicode's confusables.txt, for UTS #39's
# skeleton): enough for a name spelled wholly in Cyrillic, Greek, Armenian or Cherokee to match its Latin
# twin. A name mixing scripts is caught without it (`mixes_scripts`).
_LOOKS_LIKE = str.maketrans(
    {
        # Cyrillic
        "а": "a",
        "в": "b",
        "е": "e",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ь": "b",
        "ѕ": "s",
        "і": "i",
        "ј": "j",
        "һ": "h",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
        "ӏ": "l",
        "ү": "y",
        "ԍ": "g",
        "А": "A",
        "В": "B",
        "Е": "E",
        "К": "K",
        "М": "M",
        "Н": "H",
        "О": "O",
        "Р": "P",
        "С": "C",
        "Т": "T",
        "У": "Y",
        "Х": "X",
        "Ѕ": "S",
        "І": "I",
        "Ј": "J",
        "Һ": "H",
        "Ԛ": "Q",
        "Ԝ": "W",
        "Ӏ": "l",
        "Ү": "Y",
        "Ԍ": "G",
        # Greek
        "α": "a",
        "β": "b",
        "γ": "y",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "υ": "u",
        "χ": "x",
        "η": "n",
        "ϲ": "c",
        "ϳ": "j",
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ζ": "Z",
        "Η": "H",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Υ": "Y",
        "Χ": "X",
        "Ϲ": "C",
        # Armenian
        "օ": "o",
        "ս": "u",
        "ց": "g",
        "հ": "h",
        "ո": "n",
        "զ": "q",
        "Օ": "O",
        "Ս": "U",
        "Տ": "S",
        # Cherokee
        "Ꭺ": "A",
        "Ᏼ": "B",
        "Ꮯ": "C",
        "Ꭼ": "E",
        "Ꮋ": "H",
        "Ꭻ": "J",
        "Ꮶ": "K",
        "Ꮇ": "M",
        "Ꮲ": "P",
        "Ꮪ": "S",
        "Ꭲ": "T",
        "Ꮩ": "V",
        "Ꮃ": "W",
        "Ꮓ": "Z",
        # Latin and digits that pass for other Latin letters
        "ı": "i",
        "ȷ": "j",
        "ɑ": "a",
        "ɡ": "g",
        "ɩ": "i",
        "I": "l",
        "1": "l",
        # Latin letters that read as other Latin ones, which no mixing of scripts shows: small capitals
        # (`ᴀlice`), the turned l (`aꞁice`), IPA's upsilon and beta (dotless i and IPA's a, g, iota: below)
        "ᴀ": "a",  # U+1D00
        "ʙ": "b",  # U+0299
        "ᴄ": "c",  # U+1D04
        "ᴅ": "d",  # U+1D05
        "ᴇ": "e",  # U+1D07
        "ꜰ": "f",  # U+A730
        "ɢ": "g",  # U+0262
        "ʜ": "h",  # U+029C
        "ɪ": "i",  # U+026A
        "ᴊ": "j",  # U+1D0A
        "ᴋ": "k",  # U+1D0B
        "ʟ": "l",  # U+029F
        "ᴍ": "m",  # U+1D0D
        "ɴ": "n",  # U+0274
        "ᴏ": "o",  # U+1D0F
        "ᴘ": "p",  # U+1D18
        "ʀ": "r",  # U+0280
        "ꜱ": "s",  # U+A731
        "ᴛ": "t",  # U+1D1B
        "ᴜ": "u",  # U+1D1C
        "ᴠ": "v",  # U+1D20
        "ᴡ": "w",  # U+1D21
        "ʏ": "y",  # U+028F
        "ᴢ": "z",  # U+1D22
        "ꞁ": "l",  # U+A781
        "ʋ": "u",  # U+028B
        "ꞵ": "b",  # U+A7B5
        "|": "l",
        "ǀ": "l",
        "0": "O",
    }
)
_LOOKS_LIKE_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))

# Scripts that may share a name (UTS #39's "highly restrictive"): Latin with one of these families.
_SCRIPT_FAMILIES = ({"CJK", "HIRAGANA", "KATAKANA"}, {"CJK", "BOPOMOFO"}, {"CJK", "HANGUL"})


def comparable(name: str) -> str:
    """The name as compared: NFKC (full-width and styled letters become plain), case-folded, without the
    characters nobody sees (format and control characters, spaces, fillers)."""
    kept = "".join(c for c in unicodedata.normalize("NFKC", name) if _visible(c))
    return unicodedata.normalize("NFKC", kept.casefold())


def same_person(a: str, b: str) -> bool:
    """Whether `a` and `b` read as one name: equal once comparable, or with equal skeletons (UTS #39)."""
    if comparable(a) == comparable(b):
        return True
    return bool(_skeletons(a) & _skeletons(b))


def mixes_scripts(name: str) -> bool:
    """Whether the name's letters come from scripts that are not written together (Latin with a Cyrillic
    `а`): a name built to look like another's. Digits, punctuation and marks belong to no script here."""
    scripts = {_script(c) for c in comparable(name) if unicodedata.category(c).startswith("L")} - {""}
    return len(scripts) > 1 and not any(scripts - {"LATIN"} <= family for family in _SCRIPT_FAMILIES)


def _visible(c: str) -> bool:
    return unicodedata.category(c)[0] not in "CZ" and ord(c) not in _INVISIBLE


def _skeletons(name: str) -> set[str]:
    """Skeletons of the name as written and case-folded: confusables are told apart by case (`I` looks like
    `l`, `i` does not), and a name is compared without it."""
    plain = "".join(c for c in unicodedata.normalize("NFKC", name) if _visible(c))
    return {_skeleton(plain), _skeleton(plain.casefold())}


def _skeleton(text: str) -> str:
    bare = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    folded = bare.translate(_LOOKS_LIKE).casefold()
    for pair, letter in _LOOKS_LIKE_PAIRS:
        folded = folded.replace(pair, letter)
    return folded


def _script(letter: str) -> str:
    """The script of a letter, as the first word of its Unicode name says it (LATIN, CYRILLIC, CJK, ...);
    "" for the modifier letters every script uses."""
    name = unicodedata.name(letter, "UNKNOWN")
    if name.startswith("MODIFIER LETTER"):
        return ""
    if name.startswith(("CJK", "IDEOGRAPHIC")):
        return "CJK"
    return "KATAKANA" if name.startswith("KATAKANA-HIRAGANA") else name.split(" ", 1)[0]
