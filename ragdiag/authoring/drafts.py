"""Question drafts from a needle's sentence, by rules per language, without an LLM.

A draft is a starting point a person rewrites, never a finished query. Each rule
matches one sentence shape and turns it into the question that sentence answers;
where no rule of the document's language matches, there is **no draft** (a bad
draft costs more than none). Each draft carries its rule's name and its leakage
(:func:`ragdiag.authoring.leakage.leakage`: the share of its content words copied
from the needle), because a draft copies the needle's words by construction.

English rules (first match wins):

* ``list-term``: ``Huber (`'huber'`): Another robust loss ...`` → "What is Huber (`'huber'`)?"
* ``limitation``: ``The biggest limitation is that `PCA` ...`` → "What is the biggest limitation of `PCA`?"
* ``attribute``: ``The shape of `dual_coef_` is ...`` → "What is the shape of `dual_coef_`?"
  (a parameter's default: ``The default value of `max_features=1.0` is ...`` → "... of `max_features`?")
* ``controlled-by``: ``... is controlled by the parameter `fit_intercept`.`` → "What does the parameter `fit_intercept` control?"
* ``by-default``: ``X is enabled by default ...`` → "Is X enabled by default?"
* ``based-on``: ``X is based on ...`` / ``was inspired by`` → "What is X based on?"
* ``relation``: ``X is proportional to ...`` → "What is X proportional to?"
* ``definition``: ``X is a/an/the ...`` → "What is X?" (``are`` → "What are X?"), only for a specific
  subject: a code identifier, an acronym, a capitalised term inside it, or a word found in at most a
  quarter of the corpus's sections ("The output is ..." gets none).
* ``used-as``: ``X can be used as/to/for ...`` → "How can X be used?"
* ``installed-with``: ``X can be installed/computed/... with ...`` → "How can X be installed?"
* ``should-be``: ``X should be less than ...`` → "What should X be?"
* ``good-choice``: ``Setting `x` might be a good choice if ...`` → "When is setting `x` a good choice?"
* ``verb-object``: ``X supports/relies on/requires ...`` → "What does X support?"

German rules:

* ``definition``: ``X ist ein/eine/der/die/das ...`` → "Was ist X?" (``sind`` → "Was sind X?")
* ``belongs``: ``In die gelbe Tonne gehören ...`` → "Was gehört in die gelbe Tonne?"
* ``modal-passive``: ``X müssen nicht ausgespült werden`` → "Müssen X ausgespült werden?";
  with a time phrase first (``Alle tausend Kilometer sollte X ... gemessen werden``) → "Wann sollte X gemessen werden?"
* ``passive``: ``X wird ... gewaschen, ...`` → "Wie wird X gewaschen?"; with a time adverb first
  (``Danach wird X abgenommen``) → "Wann wird X abgenommen?"; a participle first
  (``Gegossen wird erst, wenn ...``) → "Wann wird gegossen?"
* ``verb-object``: ``X braucht/bringt/enthält ...`` → "Was braucht X?"

Every rule checks the shape of the subject it lifts (a few words, no verb-like
clause, no pronoun), so a sentence it cannot parse cleanly gets no draft.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from ..documents.corpus import Corpus, Document
from .leakage import Leakage, leakage
from .text import content_words
from ..core.words import pct

__all__ = ["Draft", "Drafts", "DraftParts", "draft_parts", "draft_question", "specificity", "draft_suggestions", "document_language", "LANGUAGES"]

#: Languages with rules; a document in another language gets no drafts.
LANGUAGES = ("en", "de")
_MARKERS = {
    "en": frozenset("the is are and of to in with for that this be by an".split()),
    "de": frozenset("der die das und ist sind mit für nicht ein eine den dem wird werden auf".split()),
}


@dataclass(frozen=True)
class Draft:
    """A question drafted from ``needle`` by ``rule`` (``language``), with its leakage against the needle."""

    needle: str
    doc_id: str
    section: str
    question: str
    rule: str
    language: str
    leakage: Leakage

    def as_json(self) -> dict:
        """``{needle, doc, section, draft, rule, language, leakage: {share, copied, words}}``."""
        return {"needle": self.needle, "doc": self.doc_id, "section": self.section, "draft": self.question,
                "rule": self.rule, "language": self.language, "source": "draft",
                "leakage": {"share": round(self.leakage.share, 3), "copied": list(self.leakage.copied),
                            "words": list(self.leakage.words), "warn": self.leakage.warn}}


@dataclass(frozen=True)
class Drafts:
    """Drafts for needle suggestions, and the suggestions no rule matched (``undrafted``: needle, doc, section)."""

    drafts: tuple[Draft, ...]
    undrafted: tuple[tuple[str, str, str], ...]
    languages: dict

    @property
    def share(self) -> float:
        """Drafted share of the suggestions."""
        total = len(self.drafts) + len(self.undrafted)
        return len(self.drafts) / total if total else 0.0

    def as_json(self) -> dict:
        """The ``truth draft --json`` object."""
        return {"suggestions": len(self.drafts) + len(self.undrafted), "drafted": len(self.drafts),
                "share": round(self.share, 3), "languages": dict(self.languages),
                "drafts": [d.as_json() for d in self.drafts],
                "undrafted": [{"needle": n, "doc": d, "section": s} for n, d, s in self.undrafted]}

    def text(self) -> str:
        """The plain-text listing of ``truth draft``."""
        total = len(self.drafts) + len(self.undrafted)
        langs = ", ".join(f"{d}: {lang or 'no rules'}" for d, lang in sorted(self.languages.items()))
        lines = [f"{len(self.drafts)} of {total} needle suggestions drafted ({pct(self.share)}); every draft is a "
                 "starting point to rewrite in your own words (leakage: words copied from the needle)",
                 f"languages: {langs}", ""]
        for d in self.drafts:
            lines += [f"{d.doc_id} > {d.section or '(preamble)'}  [{d.rule}]",
                      f"  draft:   {d.question}", f"  needle:  {d.needle}",
                      f"  leakage: {d.leakage}{'  (high: rewrite in other words)' if d.leakage.warn else ''}"]
        if self.undrafted:
            lines += ["", f"no rule applies ({len(self.undrafted)}; write these yourself):"]
            lines += [f"  {doc} > {sec or '(preamble)'}: {needle}" for needle, doc, sec in self.undrafted]
        return "\n".join(lines)


def document_language(doc: Document) -> str | None:
    """``en`` or ``de`` by the commoner function words (at least 20 of them), else None (no rules).

    >>> from ragdiag.documents.corpus import Document
    >>> document_language(Document("d", "d", "Der Hund ist mit der Katze und dem Ball für den Tag auf dem Hof. " * 3, ()))
    'de'
    """
    words = re.findall(r"\w+", doc.text.lower())
    counts = {lang: sum(w in marks for w in words) for lang, marks in _MARKERS.items()}
    lang, best = max(counts.items(), key=lambda x: x[1])
    return lang if best >= 20 else None


# ---------------------------------------------------------------------------
# cleaning a sentence and a subject
# ---------------------------------------------------------------------------

_CITE = re.compile(r"\s*\[(?:\d+|[A-Z][\w]*\d{4}[a-z]?)\]")
_BOLD = re.compile(r"\*\*|__")
_NOTE = re.compile(r"^(?:Note that|Please note that|Beachte,? dass)\s+", re.I)
_ASIDE = re.compile(r",\s+(?:which|who|i\.e\.|e\.g\.)[^,]*,")
_PRONOUNS = frozenset("it this these that those they we you he she there i es sie er wir man dies diese".split())


def _clean(sentence: str) -> str:
    s = _CITE.sub("", _BOLD.sub("", sentence)).strip()
    s = _NOTE.sub("", s)
    return _ASIDE.sub("", s)


def _subject(raw: str, *, max_words: int = 8) -> str | None:
    """A noun phrase as it may stand in a question: a few words, no pronoun, no clause; the article lowercased."""
    s = raw.strip().strip(",")
    words = s.split()
    if not words or len(words) > max_words or words[0].lower() in _PRONOUNS:
        return None
    if re.search(r"[,;:]|\b(?:that|which|if|when|because|like|such|including|this|these|those|its|their|"
                 r"dass|wenn|weil|wie|dies|diese|dieser|dieses)\b", s):
        return None
    if words[0] in ("The", "A", "An", "Der", "Die", "Das", "Ein", "Eine", "Our", "Your"):
        words[0] = {"Our": "the", "Your": "the"}.get(words[0], words[0].lower())
    return " ".join(words)


def _en_subject(raw: str) -> str | None:
    """:func:`_subject`, and a sentence-initial common word lowercased ("Shrinkage" -> "shrinkage").

    A name keeps its capitals: an acronym, an inner capital (``Barnes-Hut``), or a capitalised next word
    (``Naive Bayes``).
    """
    s = _subject(raw)
    if s is None:
        return None
    first, _, rest = s.partition(" ")
    if (first[:1].isupper() and first[1:] == first[1:].lower() and first[1:].isalpha()
            and not rest[:1].isupper()):
        s = first.lower() + (" " + rest if rest else "")
    return s


def _strip_default(ident: str) -> str:
    """```max_features=1.0``` -> ```max_features```."""
    m = re.fullmatch(r"`([\w.]+)=[^`]*`", ident)
    return f"`{m.group(1)}`" if m else ident


# ---------------------------------------------------------------------------
# English
# ---------------------------------------------------------------------------

_W = r"[\w`“”\"'\-.=()/]+"  # one token of a noun phrase
_NP = rf"(?P<s>{_W}(?: {_W}){{0,7}}?)"


def _en_rules(specific: Callable[[str], bool]) -> list[tuple[str, re.Pattern, Callable[[re.Match], str | None]]]:
    def subj(m, key="s"):
        return _en_subject(m.group(key))

    def what_is(m):
        s = subj(m)
        if s is None or not specific(s):
            return None
        verb = "are" if m.group("v") == "are" else "is"
        return f"What {verb} {s}?"

    def does(m):
        s = subj(m)
        if s is None:
            return None
        verb = m.group("v")
        plural = not verb.endswith("s")
        base = verb if plural else (verb[:-3] + "y" if verb.endswith("ies") else verb[:-1])
        tail = f" {m.group('p')}" if m.groupdict().get("p") else ""
        return f"What {'do' if plural else 'does'} {s} {base}{tail}?"

    return [
        ("list-term", re.compile(r"^(?P<s>[A-Z][\w\- ]{1,40}?(?: \(`[^`]+`\))?): [A-Z]"),
         lambda m: None if (s := _subject(m.group("s"))) is None else f"What is {s}?"),
        ("limitation", re.compile(r"^The (?P<a>(?:biggest|main|key|major) (?:limitation|advantage|drawback|"
                                  r"disadvantage)) is that (?P<s>`[^`]+`)"),
         lambda m: f"What is the {m.group('a')} of {m.group('s')}?"),
        ("attribute", re.compile(r"^The (?P<a>(?:default value|shape|default|size|type|output|range|value|"
                                 r"complexity|cost)) of (?P<s>`[^`]+`) (?:is|are)\b"),
         lambda m: f"What is the {m.group('a')} of {_strip_default(m.group('s'))}?"),
        ("controlled-by", re.compile(r" (?:is|are) (?:controlled|set|determined) by (?:the )?(?P<k>parameter|argument)s? "
                                     r"(?P<s>`[^`]+`)\.?$"),
         lambda m: f"What does the {m.group('k')} {m.group('s')} control?"),
        ("by-default", re.compile(rf"^{_NP} (?P<v>is|are) (?P<p>enabled|disabled|used|applied|set|chosen|selected) "
                                  r"by default\b"),
         lambda m: None if (s := subj(m)) is None else f"{m.group('v').capitalize()} {s} {m.group('p')} by default?"),
        ("based-on", re.compile(rf"^{_NP} (?P<v>is|are|was|were) (?P<p>based on|inspired by|derived from)\b"),
         lambda m: None if (s := subj(m)) is None else f"What {m.group('v')} {s} {m.group('p')}?"),
        ("relation", re.compile(rf"^{_NP} (?P<v>is|are) (?P<p>proportional|equivalent|equal|sensitive|invariant|"
                                r"related) to\b"),
         lambda m: None if (s := subj(m)) is None else f"What {m.group('v')} {s} {m.group('p')} to?"),
        ("definition", re.compile(rf"^{_NP} (?P<v>is|are) (?:an?|the|one)\b(?! (?:same|following|case|reason)\b)"),
         what_is),
        ("used-as", re.compile(rf"^{_NP} can be used (?:as|to|for)\b"),
         lambda m: None if (s := subj(m)) is None else f"How can {s} be used?"),
        ("installed-with", re.compile(rf"^(?:If [^,]+, )?{_NP} can be (?P<p>installed|computed|obtained|"
                                      r"estimated|accessed|controlled|tuned|specified) (?:with|by|using|via|through)\b"),
         lambda m: None if (s := subj(m)) is None else f"How can {s} be {m.group('p')}?"),
        ("should-be", re.compile(rf"^{_NP} should be (?:less|more|greater|smaller|larger|at most|at least|"
                                 r"between|close to)\b"),
         lambda m: None if (s := subj(m)) is None else f"What should {s} be?"),
        ("good-choice", re.compile(r"^Setting (?P<s>`[^`]+`) (?:might|may|can|could)? ?(?:be|is) a good choice "
                                   r"(?:if|when)\b"),
         lambda m: f"When is setting {m.group('s')} a good choice?"),
        ("verb-object", re.compile(rf"^{_NP} (?:only )?(?P<v>supports?|relies|rely|requires?|provides?|implements?|"
                                   r"computes?|returns?|accepts?|depends|depend)(?: (?P<p>on))?\b"),
         does),
    ]


# ---------------------------------------------------------------------------
# German
# ---------------------------------------------------------------------------

_DE_NP = (r"(?P<s>(?:(?:[Dd]er|[Dd]ie|[Dd]as|[Ee]in|[Ee]ine) )?(?:[\wäöüß]+(?:e|en|er|es) )?[A-ZÄÖÜ][\wäöüß\-]*"
          r"(?: (?:der|des) [A-ZÄÖÜ][\wäöüß\-]*)?)")
_DE_TIME = r"(?:Alle|Jede|Jeden|Jedes|Nach|Vor|Danach|Zuerst|Anschließend|Dann|Zuletzt|Morgens|Abends|Einmal)"
_DE_MODAL = r"(?P<m>muss|müssen|sollte|sollten|soll|sollen|kann|können|darf|dürfen)"
_DE_PART = r"(?P<p>(?:[a-zäöü]+)?ge[a-zäöüß]+[tn]|[a-zäöüß]+iert)"


def _de_subject(raw: str) -> str | None:
    s = _subject(raw, max_words=6)
    if s is None:
        return None
    words = s.split()
    # an adjective before a noun ("Junge Pflanzen") is lowercased mid-sentence; a noun stays capitalised
    if len(words) >= 2 and words[0][:1].isupper() and re.search(r"(?:e|en|er|es)$", words[0]) and words[1][:1].isupper():
        words[0] = words[0].lower()
    return " ".join(words)


def _de_rules(specific: Callable[[str], bool]) -> list[tuple[str, re.Pattern, Callable[[re.Match], str | None]]]:
    def definition(m):
        s = _de_subject(m.group("s"))
        if s is None or not specific(s):
            return None
        return f"Was {m.group('v')} {s}?"

    return [
        ("definition", re.compile(rf"^{_DE_NP} (?P<v>ist|sind) (?:ein|eine|einer|der|die|das)\b"), definition),
        ("belongs", re.compile(r"^(?P<pre>In|Zu|Auf) (?P<o>(?:die|den|das|dem|der) [\w ]{2,30}?) (?:gehören|gehört)\b"),
         lambda m: f"Was gehört {m.group('pre').lower()} {m.group('o')}?"),
        ("modal-passive", re.compile(rf"^{_DE_TIME} [\w ]{{1,30}}? {_DE_MODAL} {_DE_NP} [^,;]*? {_DE_PART} werden\b"),
         lambda m: None if (s := _de_subject(m.group("s"))) is None
         else f"Wann {m.group('m')} {s} {m.group('p')} werden?"),
        ("modal-passive", re.compile(rf"^{_DE_NP} {_DE_MODAL} (?:nicht |kein \w+ )?(?:[^,;]*? )?{_DE_PART} werden\b"),
         lambda m: None if (s := _de_subject(m.group("s"))) is None
         else f"{m.group('m').capitalize()} {s} {m.group('p')} werden?"),
        ("passive", re.compile(rf"^(?P<t>{_DE_TIME}) (?P<v>wird|werden) {_DE_NP} [^,;]*?{_DE_PART}[,;.]"),
         lambda m: None if (s := _de_subject(m.group("s"))) is None
         else f"Wann {m.group('v')} {s} {m.group('p')}?"),
        ("passive", re.compile(rf"^{_DE_PART.replace('(?:[a-zäöü]+)?ge', '(?:[A-ZÄÖÜ][a-zäöü]*)?[Gg]e')} wird (?:erst)?,? "
                               r"(?:wenn|sobald)\b"),
         lambda m: f"Wann wird {m.group('p').lower()}?"),
        ("passive", re.compile(rf"^{_DE_NP} (?P<v>wird|werden) [^;.]*?{_DE_PART}[,;.]"),
         lambda m: None if (s := _de_subject(m.group("s"))) is None or s.split()[0] in _DE_TIME_WORDS
         else f"Wie {m.group('v')} {s} {m.group('p')}?"),
        ("verb-object", re.compile(rf"^{_DE_NP} (?P<v>braucht|brauchen|bringt|bringen|enthält|enthalten|"
                                   r"benötigt|benötigen|liefert|liefern|verhindert|verhindern) "),
         lambda m: None if (s := _de_subject(m.group("s"))) is None else f"Was {m.group('v')} {s}?"),
    ]


_DE_TIME_WORDS = frozenset(_DE_TIME.strip("(?:)").split("|"))


# ---------------------------------------------------------------------------
# drafting
# ---------------------------------------------------------------------------


def specificity(corpus: Corpus) -> Callable[[str], bool]:
    """A subject is specific when it names something: code, an acronym, an inner capital, or a rare word."""
    df: Counter = Counter()
    n = 0
    for d in corpus.documents:
        for s in d.sections:
            n += 1
            df.update(content_words(d.text[s.start:s.end]))

    def specific(subject: str) -> bool:
        if "`" in subject or re.search(r"\b[A-Z]{2,}", subject) or re.search(r"\s[A-Z][a-z]", subject[3:] if
                                                                            subject[:1].isupper() else subject):
            return True
        return any(df[w] <= max(1, n // 4) for w in content_words(subject))

    return specific


@dataclass(frozen=True)
class DraftParts:
    """A draft and how it was made: its ``rule`` and the ``subject`` lifted from the needle (None: none lifted)."""

    question: str
    rule: str
    subject: str | None

    @property
    def frame(self) -> str | None:
        """The question with its subject as ``{}`` (another subject of the same frame fits it), or None."""
        if not self.subject or self.question.count(self.subject) != 1:
            return None
        return self.question.replace("{", "{{").replace("}", "}}").replace(
            self.subject.replace("{", "{{").replace("}", "}}"), "{}")


def draft_parts(sentence: str, language: str | None, specific: Callable[[str], bool] = lambda s: True
                ) -> DraftParts | None:
    """:func:`draft_question` with the subject it lifted (for near misses that swap it), or None."""
    if language not in LANGUAGES:
        return None
    text = _clean(sentence)
    rules = _en_rules(specific) if language == "en" else _de_rules(specific)
    for name, pattern, make in rules:
        m = pattern.search(text)
        if m:
            q = make(m)
            if q is not None and len(q.split()) >= 3:
                q = re.sub(r"\s+", " ", q)
                raw = m.groupdict().get("s")
                lifted = None
                if raw:
                    shaped = _en_subject(raw) if language == "en" else _de_subject(raw)
                    lifted = next((x for x in (shaped, _strip_default(raw.strip()), raw.strip()) if x and x in q),
                                  None)
                return DraftParts(q, name, lifted)
    return None


def draft_question(sentence: str, language: str | None, specific: Callable[[str], bool] = lambda s: True
                   ) -> tuple[str, str] | None:
    """``(question, rule)`` for a needle sentence in ``language`` (``en``, ``de``), or None when no rule applies.

    ``specific(subject)`` says whether a definition's subject names something (default: always).

    >>> draft_question("The `Lasso` is a linear model that estimates sparse coefficients.", "en")
    ('What is the `Lasso`?', 'definition')
    >>> draft_question("Der Rahmen wird mit milder Seifenlauge gewaschen, niemals mit einem Hochdruckreiniger.", "de")
    ('Wie wird der Rahmen gewaschen?', 'passive')
    >>> draft_question("For a worked-out comparison, see the example below.", "en") is None
    True
    """
    parts = draft_parts(sentence, language, specific)
    return None if parts is None else (parts.question, parts.rule)


def draft_suggestions(corpus: Corpus, n: int = 40) -> Drafts:
    """Draft a question for each of ``n`` needle suggestions (:func:`ragdiag.authoring.suggest.suggest`)."""
    from .suggest import suggest

    if n < 1:
        raise ValueError(f"ask for at least one suggestion (-n 1 or more), got {n}")
    langs = {d.id: document_language(d) for d in corpus.documents}
    specific = specificity(corpus)
    drafts, undrafted = [], []
    for c in suggest(corpus, n, n_ood=0).questions:
        got = draft_question(c.needle, langs.get(c.doc_id), specific)
        if got is None:
            undrafted.append((c.needle, c.doc_id, c.section))
        else:
            q, rule = got
            drafts.append(Draft(c.needle, c.doc_id, c.section, q, rule, langs[c.doc_id], leakage(q, c.needle)))
    return Drafts(tuple(drafts), tuple(undrafted), langs)
