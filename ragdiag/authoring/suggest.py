"""Candidate needles and out-of-domain queries from a corpus, without an LLM.

Known-item sampling (the way test collections for known-item search are
built): pick sentences a person could only be looking for on purpose, and let a
person write the question.

A sentence is **eligible** when it passes the loader's rules (occurs exactly
once, 40-250 characters, not a heading; checked with
:func:`ragdiag.documents.truth.parse_truth`), reads as a self-contained prose sentence
(starts with a capital, digit or backtick and ends with ``.``, ``!`` or ``?``;
at least six words; mostly letters, no display maths, no table or block-quote
markup, brackets, quotes and backticks balanced; not a literature reference;
no pronoun, connective or demonstrative in its first ten words that needs the
previous sentence: "It ...", "Second, ...", "The above practice ...").

Each eligible sentence is **scored**: distinctiveness (mean idf of its three
rarest content words, sections as the unit, scaled to [0, 1] by the largest
possible idf) plus bonuses for a default value ("by default", "the default
...", "standardmäßig"), a definition ("X is ...", "X refers to ..."), a
recommendation ("should", "recommended") and a number. The reasons are kept
(``why``).

Candidates are **spread** over documents in proportion to their size (largest
remainders, capped by each document's eligible sentences), then within a
document over its sections in proportion to theirs (D'Hondt: the next pick goes
to the section maximising ``chars / (picks + 1)`` among those with eligible
sentences left); within a section the best-scored sentence not within 300
characters of an earlier pick is taken, unless it has a near twin anywhere in
the corpus (half or more of their content words shared, e.g. the same "By
default, `MiniBatchX` divides the data into mini-batches..." sentence in two
sections): a query for one would find the other; nor one sharing half its
content words with an earlier pick of the same document (two sentences on
early stopping in one section).

The ``course`` phrasing is a **draft** from a template (the subject of a
definition, the identifier of a default, or the sentence's rarest terms and its
section), stored under ``draft``; ``queries`` stay empty until a person writes
or accepts them, so the file does not load by accident with drafts in it.

**Near out-of-domain** candidates pair two short section titles of different
documents (titles found in one document only, not generic ones such as
"Introduction") whose words no single section holds together: "How do I use {a}
together with {b}?" (the corpus's own vocabulary, a combination it does not
discuss). Any whose content words one corpus sentence mostly holds is dropped
(:func:`ragdiag.authoring.checks.near_ood_matches`).
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..documents.corpus import Corpus
from ..core.defaults import SEED
from ..documents.truth import NEEDLE_MAX, NEEDLE_MIN
from .checks import check_needle, near_ood_matches
from .coverage import DEFAULT_PHRASINGS
from .text import Sentence, _norm, content_words, corpus_sentences

__all__ = ["Candidate", "OodCandidate", "Suggestions", "suggest", "to_truth_data"]

_WORD = re.compile(r"\w+", re.UNICODE)
_START = re.compile(r"^[`\"'(\[\u201c]?[A-Z0-9\u00c0-\u00de]")
_ENDS = re.compile(r"[.!?][\"'\)\]\u201d\u2019*_]*$")
_PRONOUN = re.compile(r"^(?:It|This|These|That|Those|They|Their|Its|Such|He|She|Here|Then|Also|However|"
                      r"First|Second|Third|Finally|Thus|Hence|Therefore|Similarly|"
                      r"Es|Dies|Diese|Dieser|Dieses|Sie|Er|Das|Hier|Dann|Auch|Daher|Deshalb)\b")
# Words that point back at earlier text: a needle with one of them early on is not self-contained.
_ANAPHORA = re.compile(r"\b(?:this|these|those|above|below|such|latter|former|resulting|aforementioned|"
                       r"dies|diese|dieser|dieses|obige|obigen)\b", re.I)
# Author initials ("Li, F., Ionescu, C."), a closing year ("..., 1992."), or a year and a venue.
_CITATION = re.compile(r"\b[A-Z]\.,|\b[A-Z]\. [A-Z]\.|, (?:19|20)\d\d\.$|"
                       r"\b(?:19|20)\d\d\b.*\b(?:pp|vol|Proceedings|Journal|Conference)\b")
_PAIRS = (("(", ")"), ("[", "]"), ("\u201c", "\u201d"))
_DEFAULT = re.compile(r"\bby default\b|\bdefaults? (?:to|is|value|setting)\b|\bthe default\b|\bdefault of\b|"
                      r"standardmäßig|Standardwert|voreingestellt", re.I)
_DEFINITION = re.compile(r"^(?:An? |The |Der |Die |Das |Ein |Eine )?"
                         r"(?!(?:On|In|Since|Below|Above|When|If|For|As|At|By|With|After|Before|Common|Most|Some|"
                         r"Many|Each|All|Both|Other|Resulting|Following|Same|First|Second|Im|Bei|Mit|Für)\b)"
                         r"(?P<subject>[`\w][\w`\-.]*(?: [`\w][\w`\-.]*){0,3}?)\s+"
                         r"(?:is|are|refers to|means|denotes|ist|sind|bezeichnet|bedeutet)\s+"
                         r"(?:an?|the|called|defined|ein|eine|der|die|das)\b")
_ADVICE = re.compile(r"\b(?:should|recommended|must|advisable|sollte|empfohlen|muss)\b", re.I)
_NUMBER = re.compile(r"\d")
_IDENT = re.compile(r"`([^`\n]{2,40})`")
_MARKUP = re.compile(r"\$|\|\s|\n\s*>|<[a-z/]")
SPREAD_GAP = 300
#: A sentence with a near twin elsewhere (content-word Jaccard at least this) is an ambiguous known item.
TWIN = 0.5
#: Within a document, a candidate sharing half the content words of the smaller of it and an earlier pick is skipped.
OVERLAP = 0.5
# Section titles that name a part of any manual, not a topic.
_GENERIC = frozenset("""introduction overview implementation detail example reference tip usage complexity
formulation mathematical note summary installation setup getting started practical general misc faq
einleitung einführung überblick beispiel hinweis""".split())


@dataclass(frozen=True)
class Candidate:
    """A candidate needle: the sentence, where it lies, its score and why, and a draft phrasing."""

    needle: str
    doc_id: str
    section: str
    start: int
    score: float
    why: tuple[str, ...]
    draft: str  # a template course phrasing, to be rewritten


@dataclass(frozen=True)
class OodCandidate:
    """A candidate out-of-domain query and why it was chosen."""

    query: str
    why: str
    kind: str = "near"


@dataclass(frozen=True)
class Suggestions:
    """What :func:`suggest` proposes: candidate needles, out-of-domain queries, and notes for the user."""

    questions: tuple[Candidate, ...]
    ood: tuple[OodCandidate, ...]
    eligible: int = 0  # eligible sentences in the corpus
    notes: tuple[str, ...] = field(default=())


def _idf(corpus: Corpus) -> tuple[dict[str, float], float, dict[str, set], dict[str, Counter]]:
    """idf over sections; max idf; the sections and documents each word occurs in (counts per doc)."""
    sec_words: dict[str, set] = defaultdict(set)
    doc_counts: dict[str, Counter] = defaultdict(Counter)
    n = 0
    for d in corpus.documents:
        for i, s in enumerate(d.sections):
            n += 1
            words = content_words(d.text[s.start:s.end])
            for w in words:
                sec_words[w].add((d.id, i))
                doc_counts[w][d.id] += 1
    idf = {w: math.log((n + 1) / (len(secs) + 0.5)) for w, secs in sec_words.items()}
    return idf, math.log((n + 1) / 1.5), sec_words, doc_counts


def _eligible(s: Sentence, corpus_text: list[str]) -> bool:
    t = s.text
    if not NEEDLE_MIN <= len(t) <= NEEDLE_MAX or not _START.match(t) or not _ENDS.search(t):
        return False
    if _MARKUP.search(t) or _PRONOUN.match(t) or _CITATION.search(t) or len(_WORD.findall(t)) < 6:
        return False
    if _ANAPHORA.search(" ".join(t.split()[:10])):
        return False
    if t.count("`") % 2 or t.count("**") % 2 or any(t.count(a) != t.count(b) for a, b in _PAIRS):
        return False
    letters = sum(ch.isalpha() or ch.isspace() for ch in t)
    if letters < 0.8 * len(t):
        return False
    return sum(text.count(t) for text in corpus_text) == 1


def _surface(sentence: str, word: str) -> str:
    for tok in _WORD.findall(sentence):
        if _norm(tok.lower()) == word:
            return tok
    return word


def _draft(s: Sentence, title: str, rare: list[str], is_default: bool, definition: re.Match | None) -> str:
    ident = _IDENT.search(s.text)
    section = s.section or title
    if definition is not None:
        return f"What is {definition.group('subject').strip()}?"
    if is_default:
        if ident:
            return f"What is the default for `{ident.group(1).split('=')[0].strip()}` ({section})?"
        return f"What is used by default in {section}?"
    terms = [_surface(s.text, w) for w in rare[:2]]
    about = " and ".join(terms) if terms else section
    return f"In {section}, what is said about {about}?"


def _score(s: Sentence, title: str, idf: dict[str, float], idf_max: float):
    words = sorted(content_words(s.text), key=lambda w: -idf.get(w, 0.0))
    rare = words[:3]
    distinct = sum(idf.get(w, 0.0) for w in rare) / (3 * idf_max) if rare else 0.0
    why = [f"rare terms: {', '.join(_surface(s.text, w) for w in rare)}"]
    score = distinct
    is_default = bool(_DEFAULT.search(s.text))
    definition = _DEFINITION.match(s.text)
    if is_default:
        score += 1.0
        why.append("states a default value")
    if definition:
        score += 0.7
        why.append(f"a definition of {definition.group('subject').strip()!r}")
    if _ADVICE.search(s.text):
        score += 0.3
        why.append("a recommendation")
    if _NUMBER.search(s.text):
        score += 0.2
        why.append("contains a number")
    return score, tuple(why), _draft(s, title, rare, is_default, definition)


def _quotas(weights: dict[str, int], caps: dict[str, int], n: int) -> dict[str, int]:
    """Largest-remainder apportionment of ``n`` by ``weights``, never above ``caps``; leftovers re-apportioned."""
    quota = {k: 0 for k in weights}
    left = min(n, sum(caps.values()))
    while left > 0:
        open_ = {k: w for k, w in weights.items() if quota[k] < caps[k]}
        total = sum(open_.values()) or 1
        exact = {k: left * w / total for k, w in open_.items()}
        add = {k: min(int(v), caps[k] - quota[k]) for k, v in exact.items()}
        rest = left - sum(add.values())
        for k in sorted(open_, key=lambda k: (-(exact[k] - int(exact[k])), k)):
            if rest <= 0:
                break
            if quota[k] + add[k] < caps[k]:
                add[k] += 1
                rest -= 1
        for k, v in add.items():
            quota[k] += v
        given = sum(add.values())
        if given == 0:
            break
        left -= given
    return quota


def _spread(pool: dict[tuple[str, str], list[tuple[float, Sentence, tuple, str]]],
            sizes: dict[tuple[str, str], int], n: int, twin=lambda s: False) -> list[tuple[float, Sentence, tuple, str]]:
    for key in pool:
        pool[key].sort(key=lambda c: (-c[0], c[1].start))
    doc_sizes: Counter = Counter()
    doc_caps: Counter = Counter()
    for (doc_id, sec), size in sizes.items():
        doc_sizes[doc_id] += size
        doc_caps[doc_id] += len(pool.get((doc_id, sec), []))
    quotas = _quotas(dict(doc_sizes), dict(doc_caps), n)
    out = []
    for doc_id, quota in quotas.items():
        picks: Counter = Counter()
        taken: list[int] = []
        taken_words: list[set] = []
        secs = {k: v for k, v in pool.items() if k[0] == doc_id}
        got = 0
        while got < quota:
            live = [k for k, cands in secs.items() if cands]
            if not live:
                break
            key = max(live, key=lambda k: (sizes[k] / (picks[k] + 1), k))
            cand = secs[key].pop(0)
            if twin(cand[1]):
                continue
            words = content_words(cand[1].text)
            if any(len(words & w) >= OVERLAP * min(len(words), len(w)) for w in taken_words):
                continue  # says much the same as an earlier pick of this document
            if all(abs(cand[1].start - p) > SPREAD_GAP for p in taken) or not any(secs.values()):
                out.append(cand)
                taken.append(cand[1].start)
                taken_words.append(words)
                picks[key] += 1
                got += 1
    return out


def _ood(corpus: Corpus, n: int, sec_words: dict[str, set]) -> list[OodCandidate]:
    per_title = Counter(sec.title.lower() for d in corpus.documents for sec in d.sections)
    titles = sorted({(d.id, sec.title) for d in corpus.documents for sec in d.sections
                     if sec.title and 1 <= len(sec.title.split()) <= 4 and per_title[sec.title.lower()] == 1
                     and not re.search(r"[()\[\]:`]", sec.title) and not content_words(sec.title) & _GENERIC})

    def where(title: str) -> set:
        words = content_words(title)
        found = [sec_words.get(w, set()) for w in words]
        return set.intersection(*found) if found else set()

    rng = random.Random(SEED)
    out: list[OodCandidate] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(50 * max(n, 1)):
        if len(out) >= n or len(titles) < 2:
            break
        (da, a), (db, b) = rng.sample(titles, 2)
        if da == db or (a, b) in seen or not content_words(a) or not content_words(b) or where(a) & where(b):
            continue
        seen.add((a, b))
        query = f"How do I use {a} together with {b}?"
        top = near_ood_matches(query, corpus, top=1)
        if top and top[0].warn:
            continue
        out.append(OodCandidate(query, f"section titles {a!r} ({da}) and {b!r} ({db}): no section holds the "
                                       "words of both"))
    return out


def suggest(corpus: Corpus, n: int = 40, *, n_ood: int | None = None) -> Suggestions:
    """``n`` candidate needles spread over the corpus and ``n_ood`` (default ``n // 4``) near ood queries."""
    if n < 1:
        raise ValueError(f"ask for at least one suggestion (-n 1 or more), got {n}")
    n_ood = max(n // 4, 1) if n_ood is None else n_ood
    idf, idf_max, sec_words, doc_counts = _idf(corpus)
    texts = [d.text for d in corpus.documents]
    titles = {d.id: d.title for d in corpus.documents}
    sizes = {(d.id, s.title): s.end - s.start for d in corpus.documents for s in d.sections}
    pool: dict[tuple[str, str], list] = defaultdict(list)
    eligible = 0
    for s in corpus_sentences(corpus):
        if _eligible(s, texts):
            eligible += 1
            score, why, draft = _score(s, titles[s.doc_id], idf, idf_max)
            pool[(s.doc_id, s.section)].append((score, s, why, draft))
    all_sents = [(s, content_words(s.text)) for s in corpus_sentences(corpus)]

    def twin(sent: Sentence) -> bool:
        words = content_words(sent.text)
        return any(o is not sent and o.text != sent.text and ow and len(words & ow) / len(words | ow) >= TWIN
                   for o, ow in all_sents)

    picked = _spread(pool, sizes, n, twin)
    out = []
    for score, s, why, draft in picked:
        chk = check_needle(s.text, corpus, strategies=())
        if not chk.ok:  # cannot happen for an eligible sentence; the loader has the last word
            continue
        out.append(Candidate(s.text, s.doc_id, chk.section, s.start, round(score, 3), why, draft))
    out.sort(key=lambda c: ([d.id for d in corpus.documents].index(c.doc_id), c.start))
    notes = () if len(out) == n else (f"only {len(out)} of {n} asked: the corpus has {eligible} eligible sentences",)
    return Suggestions(tuple(out), tuple(_ood(corpus, n_ood, sec_words)), eligible, notes)


def to_truth_data(sugg: Suggestions, *, phrasings: tuple[str, ...] = DEFAULT_PHRASINGS) -> dict:
    """A ground-truth file of the suggestions: ``queries`` empty (to write), drafts and reasons kept beside."""
    return {
        "about": ("Suggested by `python -m ragdiag truth suggest` without an LLM. Each question needs its "
                  "phrasings written by a person (fill 'queries'; 'draft' is a template starting point, "
                  "it copies words from the needle); delete the candidates you do not keep. Check with "
                  "`python -m ragdiag truth check`."),
        "questions": [
            {"id": f"s{i:02d}", "needle": c.needle, "queries": {p: "" for p in phrasings},
             "draft": {"course": c.draft}, "doc": c.doc_id, "section": c.section, "why": list(c.why)}
            for i, c in enumerate(sugg.questions, 1)
        ],
        "ood": [{"id": f"so{i:02d}", "kind": o.kind, "query": o.query, "draft": True, "why": o.why}
                for i, o in enumerate(sugg.ood, 1)],
    }
