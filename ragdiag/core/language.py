"""A query's language, detected from its script and its most common words: enough to cut slices, no model.

Scripts decide first (Han, kana, Hangul, Cyrillic, Greek, Arabic, Hebrew,
Devanagari, Thai); Latin-script text is then scored by common function words
of English, German, French, Spanish, Italian, Dutch and Portuguese (the most
hits wins; ties and no hits: ``und``, undetermined). Short queries can be
misread; the slice's name says what was detected, and tags are the way to say
it for sure.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["detect_language", "LANGUAGES"]

_WORDS = {
    "en": "the a an of to and is are in on for with what how why does do can my it this that which when not i",
    "de": "der die das und ist ein eine nicht ich mit wie was warum wo wann für auf den dem des zu im sich kann",
    "fr": "le la les et est un une des du pas je avec comment pourquoi quoi dans pour sur que qui ce il",
    "es": "el la los las y es un una de del no con cómo qué por para en que se mi lo",
    "it": "il lo la gli le e è un una di del non con come perché che per in mi si",
    "nl": "de het een en is niet ik met hoe wat waarom van op voor te zijn mijn",
    "pt": "o a os as e é um uma de do da não com como que por para em meu se",
}
_VOCAB = {lang: frozenset(words.split()) for lang, words in _WORDS.items()}
_SCRIPTS = (("CJK", "zh"), ("HIRAGANA", "ja"), ("KATAKANA", "ja"), ("HANGUL", "ko"), ("CYRILLIC", "ru"),
            ("GREEK", "el"), ("ARABIC", "ar"), ("HEBREW", "he"), ("DEVANAGARI", "hi"), ("THAI", "th"))
#: Every value :func:`detect_language` returns besides ``und``.
LANGUAGES = tuple(_WORDS) + tuple(dict.fromkeys(code for _, code in _SCRIPTS))
_TOKEN = re.compile(r"[^\W\d_]+", re.UNICODE)


def detect_language(text: str) -> str:
    """An ISO 639-1 code for ``text`` (``und`` when undetermined).

    >>> detect_language("How do I set the cache size?"), detect_language("Wie lange dauert die Abholung?")
    ('en', 'de')
    >>> detect_language("机器学习是什么"), detect_language("12345")
    ('zh', 'und')
    """
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            for script, code in _SCRIPTS:
                if name.startswith(script):
                    counts[code] = counts.get(code, 0) + 1
                    break
    letters = sum(ch.isalpha() for ch in text)
    if counts and max(counts.values()) * 2 >= letters:
        if counts.get("ja"):  # kana present: Japanese, whatever the share of kanji
            return "ja"
        return max(counts, key=counts.get)
    words = [w.lower() for w in _TOKEN.findall(text)]
    scores = {lang: sum(w in vocab for w in words) for lang, vocab in _VOCAB.items()}
    best = max(scores.values(), default=0)
    leaders = [lang for lang, s in scores.items() if s == best]
    return leaders[0] if best > 0 and len(leaders) == 1 else "und"
