from contracts.payload_limits import quoted, trimmed_to_bytes


def test_text_that_fits_is_unchanged() -> None:
    assert trimmed_to_bytes("short", 100) == ("short", 5)


def test_a_cut_never_splits_a_character_and_says_how_much_was_kept() -> None:
    text, size = trimmed_to_bytes("日本" * 1000, 200)  # three bytes a character
    assert size == 6000
    assert len(text.encode("utf-8")) <= 200
    kept = text.split(" …[trimmed:")[0]
    assert set(kept) <= {"日", "本"} and kept
    assert text.endswith(f"[trimmed: {len(kept.encode('utf-8'))} of 6000 bytes kept]")


def test_a_quote_of_a_callers_text_is_cut_and_says_how_long_it_was() -> None:
    assert quoted("short") == "'short'"
    assert quoted("k" * 100, 8) == "'kkkkkkkk'… (100 characters)"
